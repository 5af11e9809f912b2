// The base URL of this API in what it returns (download commands, links to
// its docs): the configured public URL behind a proxy, else as the caller
// reached it, else (no request, as over stdio) where `idqs serve` listens.

import type { Config } from '../config.ts';

export function publicBase(config: Pick<Config, 'publicUrl' | 'host' | 'port'>, req?: { protocol: string; host: string }): string {
  if (config.publicUrl) return config.publicUrl;
  return req ? `${req.protocol}://${req.host}` : `http://${config.host}:${config.port}`;
}
