// A text export streamed line by line: an ordered query of one `line` column,
// produced into a bounded spool as fast as the engine goes and read at the
// client's pace. Blocks of BLOCK_LINES lines are joined in the engine:
// crossing into JavaScript once per block instead of once per line is what
// makes a text body about as fast as the engine's own export. No engine
// connection is held while the reader is behind: a run pauses when the spool
// is full and the next one resumes where it stopped (LIMIT/OFFSET, or the
// row ids of that line when the cohort index knows them).

import type { AppContext } from '../context.ts';
import type { Param } from '../engine/engine.ts';
import { Spool } from '../engine/spool.ts';
import { WorkCancelled, workSignal } from '../engine/work.ts';

/** Lines per block of the text body. */
const BLOCK_LINES = 1024;
/** Most lines one query of the text body produces (128 blocks); the next one resumes after them. */
const RUN_LINES = 128 * BLOCK_LINES;

export interface LineStream {
  /** Settles once the first block is produced (or the query ended or failed: then `error` says why). */
  started: Promise<void>;
  /** The failure of production, once `started` has settled. */
  readonly error: unknown;
  /** The blocks, in order. */
  blocks: () => AsyncGenerator<Buffer>;
  /** Stop production: the reader finished, failed or left (call it in the body's finally). */
  stop: () => void;
}

/**
 * The query of lines [offset, offset + take) of an export, one `line` column
 * in export order; its SQL is trusted (written by the service), its
 * parameters bound.
 */
export type LinesAt = (take: number, offset: number) => { sql: string; params: Param[] };

/** Lines of an ordered query whose last two parameters are the number of lines to take and the offset (bound as BIGINTs). */
export function pagedLines(linesSql: string, params: Param[]): LinesAt {
  return (take, offset) => ({ sql: linesSql, params: [...params, take, offset] });
}

/**
 * Stream the lines `linesAt` gives, for at most `limit` lines. `what` names
 * the export in the cancellation message.
 */
export function streamLines(ctx: AppContext, linesAt: LinesAt, limit: number, what: string): LineStream {
  // row_number() OVER () is DuckDB's streaming window, which keeps the order of its (ordered) input.
  const blocksOf = (linesSql: string) => `SELECT block, n, strlen(block)::BIGINT AS bytes FROM (
    SELECT string_agg(line, chr(10) ORDER BY rn) || chr(10) AS block, count(*)::INTEGER AS n, (rn - 1) // ${BLOCK_LINES} AS b
    FROM (SELECT line, row_number() OVER () AS rn FROM (${linesSql}))
    GROUP BY b) ORDER BY b`;
  const spool = new Spool(ctx.config.exportBufferMb * 1024 * 1024);
  const signal = workSignal();
  const stop = new AbortController();
  const both = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  const run = { signal: both, timeoutMs: ctx.config.exportTimeoutMs, timeoutSetting: 'IDQS_EXPORT_TIMEOUT_MS' };
  const produce = async () => {
    let offset = 0;
    let bytes = 0;
    while (offset < limit) {
      // Each query produces about one spool of lines (the first one RUN_LINES, then by the bytes per
      // line seen): the engine chunk that unread blocks keep alive stays near the spool's size, and a
      // fast reader needs few queries (each one sorts the cohort again).
      const perRun = offset === 0 ? RUN_LINES : Math.max(RUN_LINES, Math.floor(spool.highWater / (bytes / offset)));
      const take = Math.min(limit - offset, perRun);
      let got = 0;
      const q = linesAt(take, offset);
      const outcome = await ctx.engine.produceExport(blocksOf(q.sql), q.params, (chunk) => {
        const counts = chunk.getColumnVector(1);
        const sizes = chunk.getColumnVector(2);
        // Blocks are read from the engine's chunk when the reader takes them, not here; the
        // closure holds the chunk itself, so its memory lives as long as a block still needs it.
        for (let r = 0; r < chunk.rowCount; r++) {
          const size = Number(sizes.getItem(r) as bigint);
          spool.push({ bytes: size, read: () => Buffer.from(chunk.getColumnVector(0).getItem(r) as string) });
          bytes += size;
          const n = counts.getItem(r) as number;
          offset += n;
          got += n;
        }
        return !spool.full;
      }, run);
      if (outcome === 'end' && got < take) break; // the export ended
      // The reader is behind: resume from here once it has caught up, without holding a connection.
      await spool.drained(both);
    }
  };
  // Production starts now; callers await its first block so that a failing query fails the request, not the body.
  const done = produce().then(() => spool.end(), (e: unknown) => spool.fail(e));
  return {
    started: Promise.race([spool.started(), done]),
    get error() {
      return spool.error;
    },
    blocks: () => spool.drain(),
    stop: () => stop.abort(new WorkCancelled(`the ${what} reader stopped`)),
  };
}
