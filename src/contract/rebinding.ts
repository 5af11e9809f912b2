// DNS-rebinding protection, one rule for every surface. A web page the user
// opens can point its own host name at 127.0.0.1 and then call a server on
// loopback as if it were same-origin; the Host header it sends still names the
// page's host. So a server listening on loopback answers only requests naming
// a loopback name, the address it listens on, or a host the operator allows
// (IDQS_PUBLIC_URL's host, IDQS_ALLOWED_HOSTS). The agent endpoint, which
// browsers have no business calling cross-site, also refuses any Origin
// outside that set, whatever the listening address.

import type { Config } from '../config.ts';

export type RebindingConfig = Pick<Config, 'host' | 'publicUrl' | 'allowedHosts'>;

/** Host name (lower case, IPv6 in brackets) and port of a Host header or URL authority; null when it does not parse. */
export function splitHost(host: string): { name: string; port: string } | null {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]/@\s]+)(?::([0-9]{1,5}))?$/.exec(host.trim().toLowerCase());
  return m ? { name: m[1]!.replace(/\.$/, ''), port: m[2] ?? '' } : null;
}

/** Names no one else can point at this machine: localhost (and *.localhost), 127.0.0.0/8, ::1. */
export function isLoopbackName(name: string): boolean {
  const n = name.toLowerCase();
  return n === 'localhost' || n.endsWith('.localhost') || /^127(\.[0-9]{1,3}){3}$/.test(n) || n === '[::1]' || n === '::1';
}

function bracketed(name: string): string {
  return name.includes(':') && !name.startsWith('[') ? `[${name}]` : name;
}

/** Whether the Host check applies: the server listens on a loopback address. */
export function listensOnLoopback(config: RebindingConfig): boolean {
  return isLoopbackName(config.host);
}

export interface RebindingGuard {
  /** Why a request's Host header is refused, or null when it is not (always null off loopback). */
  host(host: string | undefined): string | null;
  /** Why a request's Origin header is refused, or null when it is absent or allowed. */
  origin(origin: string | undefined): string | null;
}

/** The guard of a configuration, its allowed names worked out once. */
export function rebindingGuard(config: RebindingConfig): RebindingGuard {
  const listen = bracketed(config.host.toLowerCase());
  const allowed = config.allowedHosts.map((a) => (a === '*' ? '*' : splitHost(a))).filter((a) => a !== null);
  if (config.publicUrl) {
    const pub = splitHost(new URL(config.publicUrl).host);
    if (pub) allowed.push({ name: pub.name, port: '' });
  }
  const known = (name: string, port: string) =>
    isLoopbackName(name) || name === listen || allowed.some((a) => a === '*' || (a.name === name && (a.port === '' || a.port === port)));
  const howToAllow = (what: string) =>
    `(a guard against DNS rebinding). If this server is meant to answer for ${what}, add it to IDQS_ALLOWED_HOSTS (or set IDQS_PUBLIC_URL).`;
  const onLoopback = listensOnLoopback(config);
  return {
    host(host) {
      if (!onLoopback || host === undefined) return null;
      const h = splitHost(host);
      if (h && known(h.name, h.port)) return null;
      return `Host ${JSON.stringify(host)} is not allowed: this server listens on ${config.host} and answers only requests to a loopback name (localhost, 127.0.0.1, [::1]), its listening address or an allowed host ${howToAllow('that name')}`;
    },
    origin(origin) {
      if (origin === undefined) return null;
      let parsed: URL | null = null;
      try {
        parsed = new URL(origin);
      } catch {
        /* "null" or garbage: refused below */
      }
      if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:')) {
        const h = splitHost(parsed.host);
        if (h && known(h.name, h.port)) return null;
      }
      return `Origin ${JSON.stringify(origin)} is not allowed: the agent endpoint answers only clients that send no Origin or one on a loopback name, its listening address or an allowed host ${howToAllow('that origin’s host')}`;
    },
  };
}
