// The base URL of this API in what it returns (download commands, links to
// its docs): the configured public URL behind a proxy, else as the caller
// reached it.

import type { AppContext } from '../core/context.ts';

export function publicBase(ctx: AppContext, req: { protocol: string; host: string }): string {
  return ctx.config.publicUrl ?? `${req.protocol}://${req.host}`;
}
