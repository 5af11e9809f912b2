// gzip made a piece at a time on several threads (src/http/parallel-gzip.ts):
// whatever the blocks (empty ones, ones smaller or larger than a piece, a body
// of no byte at all), the output is one gzip member that the system's gzip
// and Node's zlib both read back to exactly the input, CRC and length checked.
// A streamed body that fails half-way still ends in its error line and a cut
// transfer, gzipped or not (src/http/streams.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { constants, gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import type { AppContext } from '../src/core/context.ts';
import { sendBlocks } from '../src/http/streams.ts';
import { rawHttp } from './fixture.ts';
import { parallelGzip } from '../src/http/parallel-gzip.ts';

/** Text that compresses like a resolve's answer (repeated keys, varying identifiers), from a fixed seed. */
function sample(bytes: number, seed: number): Buffer {
  let x = seed;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31), x / 2 ** 31);
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    const s = `{"line":${parts.length + 1},"class":"current","id":"${Math.floor(rnd() * 1e12).toString(16)}","size":${(rnd() * 1000).toFixed(3)}},`;
    parts.push(s);
    n += s.length;
  }
  return Buffer.from(parts.join('').slice(0, bytes));
}

async function gzipOf(blocks: Buffer[], pieceBytes: number, inFlight: number): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const b of parallelGzip(blocks, { pieceBytes, inFlight })) out.push(b);
  return Buffer.concat(out);
}

/** The system's gzip, reading the member from stdin: a decoder that is not Node's. */
function systemGunzip(gz: Buffer): Buffer {
  const r = spawnSync('gzip', ['-dc'], { input: gz, maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, r.stderr.toString());
  return r.stdout;
}

test('parallel gzip: blocks of every size, cut into many pieces, read back exactly by the system gzip and by zlib', async () => {
  const body = sample(3_000_000, 7);
  // Blocks of uneven sizes (some empty, some past a piece), so pieces start and end inside blocks.
  const blocks: Buffer[] = [];
  for (let at = 0, i = 0; at < body.length; i++) {
    const len = [0, 1, 70_000, 300_000, 5, 1_200_000][i % 6]!;
    blocks.push(body.subarray(at, Math.min(body.length, at + len)));
    at += len;
  }
  for (const [pieceBytes, inFlight] of [[64 * 1024, 4], [256 * 1024, 1], [1 << 20, 2], [1 << 24, 4]] as const) {
    const gz = await gzipOf(blocks, pieceBytes, inFlight);
    assert.deepEqual([gz[0], gz[1], gz[2]], [0x1f, 0x8b, 8], 'a gzip header');
    assert.ok(systemGunzip(gz).equals(body), `system gzip reads it back (pieces of ${pieceBytes} B, ${inFlight} at once)`);
    assert.ok(gunzipSync(gz).equals(body), `zlib reads it back (pieces of ${pieceBytes} B)`);
    // The pieces refer back into the ones before them: it compresses about as well as one zlib stream does.
    assert.ok(gz.length < body.length / 2, `${gz.length} bytes for ${body.length}`);
  }
});

test('parallel gzip: an empty body is a valid empty member; a damaged trailer is caught by the readers', async () => {
  const empty = await gzipOf([], 1 << 20, 4);
  assert.equal(gunzipSync(empty).length, 0);
  assert.equal(systemGunzip(empty).length, 0);
  // The trailer carries the CRC32 and the length: change one byte and both readers refuse it.
  const gz = await gzipOf([sample(200_000, 3)], 32 * 1024, 4);
  const bad = Buffer.from(gz);
  bad[bad.length - 6]! ^= 0xff;
  assert.throws(() => gunzipSync(bad));
  assert.notEqual(spawnSync('gzip', ['-dc'], { input: bad }).status, 0);
});

test('a body that fails half-way, gzipped on every core or not: the blocks before it and the error line arrive, and the transfer is cut, never ended', async () => {
  const app = Fastify();
  app.decorate('ctx', { config: { writeTimeoutMs: 10_000, streamMaxS: 60 } } as unknown as AppContext);
  const block = sample(700_000, 11);
  app.get('/body', (req, reply) => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield block;
      yield block;
      throw new Error('the engine went away');
    }
    return sendBlocks(req, reply, failing(), { gzipOnCores: true });
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    for (const encoding of ['gzip', 'identity']) {
      const got = await rawHttp(`${url}/body`, { headers: { 'accept-encoding': encoding } });
      assert.equal(got.complete, false, `${encoding}: the transfer must not end cleanly`);
      assert.equal(got.headers['content-encoding'], encoding === 'gzip' ? 'gzip' : undefined);
      // What a reader gets: gzip read as far as it goes (the stream is whole up to the cut).
      const text = encoding === 'gzip' ? gunzipSync(got.body, { finishFlush: constants.Z_SYNC_FLUSH }) : got.body;
      assert.ok(text.subarray(0, 2 * block.length).equals(Buffer.concat([block, block])), `${encoding}: the blocks before the failure`);
      assert.match(text.subarray(2 * block.length).toString(), /^# ERROR: the manifest was cut here: internal error\n$/, encoding);
    }
  } finally {
    await app.close();
  }
});
