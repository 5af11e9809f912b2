// A minimal HTTP/1.1 GET for large files: one request per connection
// (Connection: close), the response read into one reused 1 MB buffer (the
// socket's `onread`) and the body handed over in place. node:http turns every
// read of at most 64 KB into a new Buffer and a parser callback; on loopback
// it drained a file at a third of curl's speed (bench:fetch), this at about
// curl's. Bodies framed by Content-Length or by the end of the connection;
// anything else (chunked) is reported so the caller can use node:http.

import net from 'node:net';
import tls from 'node:tls';

/** Size of the read buffer (one per download). */
const READ_BUFFER = 1 << 20;
/** Largest status line plus headers accepted. */
const MAX_HEAD = 64 * 1024;

export interface BodyResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** True when the body is framed in a way this client does not read (chunked): discard() it and ask node:http. */
  unsupportedFraming: boolean;
  /**
   * Hand the body to `onChunk`, piece by piece, and resolve at its end. A
   * piece is a view into a reused buffer: consume it before returning. An
   * exception from `onChunk` ends the read with that error.
   */
  read(onChunk: (chunk: Buffer) => void): Promise<void>;
  /** Close the connection without reading the body. */
  discard(): void;
}

export interface RawGetOptions {
  signal?: AbortSignal;
  /** Idle time after which the connection is dropped (an ETIMEDOUT error). */
  timeoutMs: number;
}

function parseHead(head: string): { status: number; headers: Record<string, string> } {
  const lines = head.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) throw Object.assign(new Error(`not an HTTP/1.x response: ${JSON.stringify((lines[0] ?? '').slice(0, 60))}`), { code: 'EPROTO' });
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { status: Number(m[1]), headers };
}

/** GET `url` with `headers`; resolves once the status line and headers have arrived (the body is read with read()). */
export function rawGet(url: URL, headers: Record<string, string>, opts: RawGetOptions): Promise<BodyResponse> {
  return new Promise<BodyResponse>((resolveHead, rejectHead) => {
    const secure = url.protocol === 'https:';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port) || (secure ? 443 : 80);
    let phase = 'head' as 'head' | 'body' | 'done';
    let head = Buffer.alloc(0);
    /** Body bytes still expected; null = until the connection ends. */
    let remaining: number | null = null;
    /** Body bytes that arrived before read() was called (copies). */
    let queued: Buffer[] = [];
    let sink: ((c: Buffer) => void) | null = null;
    let settleBody: { resolve: () => void; reject: (e: Error) => void } | null = null;
    let failure: Error | null = null;
    // A function, not an inline test: deliver() changes phase behind TypeScript's narrowing.
    const ended = () => phase === 'done';

    const finish = (err: Error | null) => {
      if (phase === 'done') return;
      const wasHead = phase === 'head';
      phase = 'done';
      opts.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if (wasHead) {
        if (err) rejectHead(err);
        return;
      }
      if (settleBody) {
        if (err) settleBody.reject(err);
        else settleBody.resolve();
      } else failure = err;
    };
    const deliver = (c: Buffer) => {
      if (remaining !== null) {
        if (c.length > remaining) c = c.subarray(0, remaining);
        remaining -= c.length;
      }
      if (c.length > 0) sink!(c);
      if (remaining === 0) finish(null);
    };
    const onBody = (c: Buffer) => {
      if (!sink) {
        queued.push(Buffer.from(c));
        return;
      }
      try {
        deliver(c);
      } catch (e) {
        finish(e as Error);
      }
    };
    const onData = (nread: number, buf: Buffer) => {
      if (phase === 'done') return;
      const chunk = buf.subarray(0, nread);
      if (phase === 'body') {
        onBody(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_HEAD) finish(Object.assign(new Error('response headers too large'), { code: 'EPROTO' }));
        return;
      }
      let parsed: { status: number; headers: Record<string, string> };
      try {
        parsed = parseHead(head.subarray(0, end).toString('latin1'));
      } catch (e) {
        finish(e as Error);
        return;
      }
      const rest = head.subarray(end + 4);
      head = Buffer.alloc(0);
      const { status, headers: h } = parsed;
      const noBody = status === 204 || status === 304 || (status >= 100 && status < 200);
      const unsupportedFraming = !noBody && h['transfer-encoding'] !== undefined && h['transfer-encoding'].toLowerCase() !== 'identity';
      const length = Number(h['content-length']);
      remaining = noBody ? 0 : h['content-length'] !== undefined && Number.isSafeInteger(length) && length >= 0 ? length : null;
      phase = 'body';
      socket.pause();
      if (rest.length > 0) queued.push(Buffer.from(rest));
      resolveHead({
        status,
        headers: h,
        unsupportedFraming,
        read: (onChunk) =>
          new Promise<void>((resolve, reject) => {
            if (failure || phase === 'done') {
              // Ended before read(): deliver what came, then report how it ended.
              sink = onChunk;
              try {
                for (const q of queued) deliver(q);
              } catch (e) {
                failure ??= e as Error;
              }
              queued = [];
              if (failure) reject(failure);
              else if (remaining !== null && remaining > 0) reject(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
              else resolve();
              return;
            }
            settleBody = { resolve, reject };
            sink = onChunk;
            const early = queued;
            queued = [];
            try {
              for (const q of early) {
                if (ended()) break;
                deliver(q);
              }
            } catch (e) {
              finish(e as Error);
              return;
            }
            if (!ended()) socket.resume();
          }),
        discard: () => finish(null),
      });
      if (remaining === 0 && queued.length === 0) {
        // Nothing to read: the body is complete already (read() resolves at once).
        phase = 'done';
        opts.signal?.removeEventListener('abort', onAbort);
        socket.destroy();
      }
    };

    // The callback's return value false would pause reading; pausing is done with socket.pause() instead.
    const onread = {
      buffer: Buffer.allocUnsafe(READ_BUFFER),
      callback: (n: number, b: Buffer) => {
        onData(n, b);
        return true;
      },
    };
    const socket = secure
      ? // onread is passed on to the underlying socket (missing from the type definitions).
        tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'], onread } as tls.ConnectionOptions)
      : net.connect({ host, port, onread });
    const onAbort = () => finish(Object.assign(new Error('aborted'), { name: 'AbortError', code: 'ABORT_ERR' }));
    if (opts.signal?.aborted) {
      onAbort();
      return;
    }
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    socket.setTimeout(opts.timeoutMs, () => finish(Object.assign(new Error(`no data for ${opts.timeoutMs / 1000} s`), { code: 'ETIMEDOUT' })));
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close'];
      for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    socket.on('error', (e) => finish(e));
    socket.on('end', () => {
      if (phase === 'head') finish(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      else if (remaining === null || remaining === 0) finish(null);
      else finish(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
    socket.on('close', () => {
      if (phase !== 'done') finish(Object.assign(new Error(phase === 'head' ? 'socket hang up' : 'premature close'), { code: phase === 'head' ? 'ECONNRESET' : 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}
