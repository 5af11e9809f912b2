// What a tool call tells its client while it runs: progress notifications
// when the client asked for them (a progressToken) and the call is slow
// (IDQS_MCP_PROGRESS_MS: after that long, then at that interval), and
// log messages (notifications/message) at or above the level the client set
// with logging/setLevel. Both are sent as related to the call's request, so
// over HTTP they travel in that request's SSE response.

import type { LoggingLevel, ServerNotification } from '@modelcontextprotocol/sdk/types.js';

/** Severity order of the protocol's levels (RFC 5424, least severe first). */
const LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];


export type Send = (notification: ServerNotification) => Promise<void>;

/**
 * The client's chosen log level, per connection (one McpServer). None until
 * the client sets one: a client that never asked gets no log messages, so
 * its stream carries only what it asked for.
 */
export class LogLevel {
  level: LoggingLevel | null = null;

  allows(level: LoggingLevel): boolean {
    return this.level !== null && LEVELS.indexOf(level) >= LEVELS.indexOf(this.level);
  }
}

/** Send a log message when the level allows it; a client gone away is not an error of the call. */
export function logTo(send: Send, levels: LogLevel, level: LoggingLevel, data: Record<string, unknown>): void {
  if (levels.allows(level)) send({ method: 'notifications/message', params: { level, logger: 'idqs', data } }).catch(() => undefined);
}

/**
 * Progress of a call whose total is unknown (a query runs until the engine
 * answers): elapsed seconds, strictly increasing, with a message. Returns the
 * function that stops it.
 */
export function reportProgress(send: Send, token: string | number, tool: string, everyMs: number): () => void {
  const started = performance.now();
  let last = 0;
  const tick = () => {
    // Whole tenths of a second, so two ticks never report the same value.
    const elapsed = Math.round(Math.max(last + 0.1, (performance.now() - started) / 1000) * 10) / 10;
    last = elapsed;
    send({ method: 'notifications/progress', params: { progressToken: token, progress: elapsed, message: `${tool}: running for ${elapsed.toFixed(1)} s` } }).catch(() => undefined);
  };
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    tick();
    interval = setInterval(tick, everyMs);
  }, everyMs);
  return () => {
    clearTimeout(first);
    if (interval) clearInterval(interval);
  };
}
