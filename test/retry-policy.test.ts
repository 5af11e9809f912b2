// The one retry policy of the release fetch (http-file.ts) and the S3 client (s3.ts), against a real local HTTP
// server that answers each request from a script: a 503 with Retry-After: 1 is retried after about a second (not
// the few ms of the backoff the test sets), a 429 with an HTTP-date Retry-After after the date, a 404 once, a reset
// connection again, and a server that always fails gets retries + 1 requests, no more.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getText } from '../src/core/release/http-file.ts';
import { S3Client } from '../src/core/s3.ts';

type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'reset';
let script: Answer[] = [];
/** When each request arrived (ms since the test's start). */
let arrivals: number[] = [];
let t0 = 0;
let server: http.Server;
let base: string;

const LISTING = '<?xml version="1.0"?><ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a.dcm</Key><Size>3</Size><ETag>"x"</ETag></Contents></ListBucketResult>';

before(async () => {
  server = http.createServer((req, res) => {
    arrivals.push(performance.now() - t0);
    const a = script.shift() ?? { status: 200, body: 'ok' };
    if (a === 'reset') {
      req.socket.destroy();
      return;
    }
    res.writeHead(a.status, { connection: 'close', ...a.headers });
    res.end(a.body ?? '');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

function run(answers: Answer[]): void {
  script = answers;
  arrivals = [];
  t0 = performance.now();
}
const gap = () => arrivals[1]! - arrivals[0]!;
const fast = { retries: 4, retryBaseMs: 5 };

test('a 503 with Retry-After: 1 is retried after about a second, not after the backoff', async () => {
  run([{ status: 503, headers: { 'retry-after': '1' } }, { status: 200, body: 'hello' }]);
  const r = await getText(`${base}/file.txt`, fast);
  assert.equal(r?.text, 'hello');
  assert.equal(arrivals.length, 2);
  assert.ok(gap() >= 950 && gap() < 2500, `second request ${gap().toFixed(0)} ms after the first`);
});

test('a 429 with an HTTP-date Retry-After waits until that date', async () => {
  // HTTP dates have whole seconds: two seconds ahead is more than one second away.
  const when = new Date(Date.now() + 2000);
  run([{ status: 429, headers: { 'retry-after': when.toUTCString() } }, { status: 200, body: 'later' }]);
  const r = await getText(`${base}/file.txt`, fast);
  assert.equal(r?.text, 'later');
  assert.equal(arrivals.length, 2);
  const expected = Math.floor(when.getTime() / 1000) * 1000 - (performance.timeOrigin + t0 + arrivals[0]!);
  assert.ok(gap() >= expected - 100 && gap() >= 900 && gap() < expected + 1500, `waited ${gap().toFixed(0)} ms, the date was ${expected.toFixed(0)} ms away`);
});

test('a 503 without Retry-After is retried after the backoff (a few ms here)', async () => {
  run([{ status: 503 }, { status: 200, body: 'soon' }]);
  assert.equal((await getText(`${base}/file.txt`, fast))?.text, 'soon');
  assert.ok(gap() < 500, `backoff of ${gap().toFixed(0)} ms`);
});

test('a 404 is not retried', async () => {
  run([{ status: 404 }, { status: 200, body: 'never asked' }]);
  assert.equal(await getText(`${base}/missing.txt`, fast), null);
  assert.equal(arrivals.length, 1);
});

test('a 408 is retried', async () => {
  run([{ status: 408 }, { status: 200, body: 'again' }]);
  assert.equal((await getText(`${base}/file.txt`, fast))?.text, 'again');
  assert.equal(arrivals.length, 2);
});

test('a connection reset is retried', async () => {
  run(['reset', { status: 200, body: 'after reset' }]);
  assert.equal((await getText(`${base}/file.txt`, fast))?.text, 'after reset');
  assert.equal(arrivals.length, 2);
});

test('the attempts are bounded: retries + 1 requests, then the last error', async () => {
  run(Array.from({ length: 20 }, () => ({ status: 500 })));
  await assert.rejects(getText(`${base}/file.txt`, { retries: 3, retryBaseMs: 5 }), /HTTP 500/);
  assert.equal(arrivals.length, 4);
});

test('the S3 client follows the same policy: Retry-After on 503, bounded attempts, 404 final', async () => {
  const retried: number[] = [];
  const s3 = new S3Client({ endpoint: base, connections: 1, retries: 2, retryBaseMs: 5, onRetry: (_w, _n, _e, delay) => retried.push(delay) });
  try {
    const signal = new AbortController().signal;
    run([{ status: 503, headers: { 'retry-after': '1' } }, { status: 200, body: LISTING }]);
    const objects = await s3.list('bucket', '', signal);
    assert.deepEqual(objects.map((o) => o.key), ['a.dcm']);
    assert.ok(gap() >= 950 && gap() < 2500, `second request ${gap().toFixed(0)} ms after the first`);
    assert.deepEqual(retried, [1000]);

    run(Array.from({ length: 20 }, () => ({ status: 502 })));
    await assert.rejects(s3.list('bucket', '', signal), /HTTP 502/);
    assert.equal(arrivals.length, 3);

    run([{ status: 404 }, { status: 200, body: LISTING }]);
    await assert.rejects(s3.list('bucket', '', signal), /HTTP 404/);
    assert.equal(arrivals.length, 1);

    run(['reset', { status: 200, body: LISTING }]);
    assert.equal((await s3.list('bucket', '', signal)).length, 1);
    assert.equal(arrivals.length, 2);
  } finally {
    s3.close();
  }
});
