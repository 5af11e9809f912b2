// The base URL of this API in what it returns (download commands, links to
// its docs). The configured public URL when set; else the host the request
// named, but only a host the operator allows (IDQS_ALLOWED_HOSTS) or a
// loopback name on the port it reached, so a forged Host header never ends up
// in an answer (or in a shared cache); else the address the connection
// actually reached. Without a request (stdio), where `idqs serve` listens.

import type { Config } from '../config.ts';

/** What a request says about where it was sent (a Fastify request fits). */
export interface RequestOrigin {
  /** http or https (from X-Forwarded-Proto only behind a trusted proxy). */
  protocol: string;
  /** The Host header (X-Forwarded-Host behind a trusted proxy). */
  host: string;
  socket?: { localAddress?: string | undefined; localPort?: number | undefined } | null;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function hostAndPort(host: string): [string, string] {
  const m = /^(\[[^\]]+\]|[^:]+)(?::([0-9]+))?$/.exec(host.trim().toLowerCase());
  return m ? [m[1]!, m[2] ?? ''] : ['', ''];
}

/** Whether `host` (host or host:port) may be written into an answer. */
export function hostAllowed(config: Pick<Config, 'allowedHosts' | 'host'>, host: string, localPort: number | undefined): boolean {
  const [name, port] = hostAndPort(host);
  if (name === '') return false;
  const samePort = port === '' ? localPort === 80 : Number(port) === localPort;
  if ((LOOPBACK.has(name) || name === config.host.toLowerCase()) && samePort) return true;
  return config.allowedHosts.some((a) => a === '*' || a === name || a === `${name}:${port}` || (a === `${name}:80` && port === ''));
}

export function publicBase(config: Pick<Config, 'publicUrl' | 'host' | 'port' | 'allowedHosts'>, req?: RequestOrigin): string {
  if (config.publicUrl) return config.publicUrl;
  if (!req) return `http://${config.host}:${config.port}`;
  const local = req.socket ?? {};
  if (req.host && hostAllowed(config, req.host, local.localPort)) return `${req.protocol}://${req.host.toLowerCase()}`;
  const address = local.localAddress ?? config.host;
  const ip = address.startsWith('::ffff:') ? address.slice(7) : address;
  return `${req.protocol}://${ip.includes(':') ? `[${ip}]` : ip}:${local.localPort ?? config.port}`;
}
