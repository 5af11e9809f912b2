// gzip of a long body on every core, as pigz does: the body is cut into pieces
// of about a megabyte, each compressed as raw deflate on a thread of libuv's
// pool (several at once) with the previous piece's last 32 KB as its
// dictionary, all but the last ending on a byte boundary (a sync flush), so
// their concatenation is one deflate stream; the gzip header and trailer (CRC32
// and length of the whole) frame it. Any gzip reader reads it. One zlib
// stream compresses on one thread: for the 68 MB answer of a resolve of
// 100,000 lines that was most of the time after the query.

import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { constants, crc32, deflateRaw, type ZlibOptions } from 'node:zlib';

const deflateRawAsync = promisify<Buffer, ZlibOptions, Buffer>(deflateRaw);

/** The gzip header: deflate, no name or comment, no modification time, unknown OS (RFC 1952). */
const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
/** Deflate's window: a piece may refer this far back into the one before. */
const WINDOW = 32 * 1024;

export interface ParallelGzipOptions {
  /** zlib level (1 fastest). */
  level?: number;
  /** Bytes of the body per piece. */
  pieceBytes?: number;
  /** Pieces compressed at once (each holds a thread of libuv's pool while it runs). */
  inFlight?: number;
}

/**
 * Pieces at once by default: one per core, but at most half of libuv's pool, which file reads, DNS and every other
 * response's compression share (a resolve must not queue them behind its pieces).
 */
const DEFAULT_IN_FLIGHT = Math.max(1, Math.min(availableParallelism(), Math.floor((Number(process.env.UV_THREADPOOL_SIZE) || 4) / 2)));

/** The gzip member of a body given in blocks, compressed a piece at a time on several threads, in order. */
export async function* parallelGzip(blocks: AsyncIterable<Buffer> | Iterable<Buffer>, opts: ParallelGzipOptions = {}): AsyncGenerator<Buffer> {
  const level = opts.level ?? 1;
  const pieceBytes = opts.pieceBytes ?? 1 << 20;
  const inFlight = Math.max(1, opts.inFlight ?? DEFAULT_IN_FLIGHT);
  const pending: Promise<Buffer>[] = [];
  let crc = 0;
  let size = 0;
  let tail: Buffer | undefined;
  let parts: Buffer[] = [];
  let partBytes = 0;

  const launch = (last: boolean) => {
    const piece = parts.length === 1 ? parts[0]! : Buffer.concat(parts, partBytes);
    parts = [];
    partBytes = 0;
    crc = crc32(piece, crc);
    size += piece.length;
    const done = deflateRawAsync(piece, {
      level,
      chunkSize: 1 << 18,
      finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH,
      ...(tail && tail.length > 0 ? { dictionary: tail } : {}),
    });
    // Awaited in order below; a piece that fails while an earlier one is awaited must not be an unhandled rejection.
    done.catch(() => {});
    pending.push(done);
    tail = piece.length >= WINDOW || !tail ? piece.subarray(Math.max(0, piece.length - WINDOW)) : Buffer.concat([tail, piece]).subarray(-WINDOW);
  };

  yield HEADER;
  for await (const block of blocks) {
    if (block.length === 0) continue;
    parts.push(block);
    partBytes += block.length;
    if (partBytes >= pieceBytes) {
      launch(false);
      while (pending.length >= inFlight) yield await pending.shift()!;
    }
  }
  launch(true);
  while (pending.length > 0) yield await pending.shift()!;
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(size % 2 ** 32, 4);
  yield trailer;
}
