// The large-body lane (src/http/large-bodies.ts), on the test dataset: a request
// with a large body waits for its slot before its body is read, a full queue is
// refused with 503 busy and Retry-After naming the settings, small requests never
// wait for it, the slot comes back when a client leaves, and a large filter's
// counts are the counts SQL gives.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startServer, type TestServer } from './fixture.ts';
import { litList } from './sql-text.ts';

let s: TestServer;
before(async () => {
  s = await startServer({ largeBodies: 1, largeBodyQueue: 0, largeBodyBytes: 4096 });
});
after(async () => {
  await s?.close();
});

/** A POST whose body is declared `length` bytes long and sent only in part: it holds whatever it was let into. */
function halfSent(path: string, length: number): Promise<Socket> {
  const url = new URL(s.url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(url.port), url.hostname, () => {
      sock.write(`POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{"terms":{"PatientID":["`);
      resolve(sock);
    });
    sock.on('error', reject);
  });
}

const laneStats = async () => {
  const text = await (await s.get('/metrics')).text();
  const field = (f: string) => Number(new RegExp(`^idqs_budget\\{budget="large_bodies",field="${f}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
  return { busy: field('busy'), rejected: field('rejected'), admitted: field('admitted') };
};

const ids = (n: number) => Array.from({ length: n }, (_, i) => `P-${String(i).padStart(6, '0')}`);

test('a second large body waits for the first: with no queue it is refused with 503 busy naming the settings; small requests answer meanwhile', async () => {
  const holder = await halfSent('/v3/cohort/counts', 100_000);
  try {
    // The holder has its slot once the lane counts it busy.
    for (let i = 0; i < 100 && (await laneStats()).busy !== 1; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal((await laneStats()).busy, 1);
    const big = await s.post('/v3/cohort/counts', { terms: { PatientID: ids(1000) } });
    assert.equal(big.status, 503);
    assert.equal(big.headers.get('retry-after'), '2');
    const body = (await big.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'busy');
    assert.match(body.error.message, /IDQS_LARGE_BODIES/);
    assert.match(body.error.message, /IDQS_LARGE_BODY_QUEUE/);
    // A small request does not go through the lane.
    const small = await s.post('/v3/cohort/counts', { terms: { Modality: ['CT'] } });
    assert.equal(small.status, 200);
    assert.ok(((await small.json()) as { series: number }).series > 0);
    assert.equal((await laneStats()).rejected, 1);
  } finally {
    holder.destroy();
  }
  // The client that left gives its slot back: the next large body is answered.
  for (let i = 0; i < 100 && (await laneStats()).busy !== 0; i++) await new Promise((r) => setTimeout(r, 20));
  const again = await s.post('/v3/cohort/counts', { terms: { PatientID: ids(1000) } });
  assert.equal(again.status, 200);
});

test('large filters through the lane count what SQL counts, one after another and at once', async () => {
  const rows = await s.ctx.engine.rows('SELECT DISTINCT PatientID AS p FROM "index" ORDER BY 1');
  const real = rows.map((r) => String(r.p));
  // A long list: real patients among made-up ones, well past the lane's threshold and the answer key's sorted form.
  const asked = [...ids(3000), ...real.slice(0, 40)];
  const [sql] = await s.ctx.engine.rows(
    `SELECT count(DISTINCT PatientID) AS patients, count(DISTINCT StudyInstanceUID) AS studies, count(*) AS series FROM "index" WHERE PatientID IN (${litList(asked)})`,
  );
  const answers = await Promise.all([0, 1, 2].map(() => s.post('/v3/cohort/counts', { terms: { PatientID: asked } })));
  // Queue 0 and one slot: whichever came second may be refused; every answer given is right.
  let answered = 0;
  for (const r of answers) {
    if (r.status === 503) continue;
    assert.equal(r.status, 200);
    const c = (await r.json()) as { patients: number; studies: number; series: number };
    assert.deepEqual({ patients: c.patients, studies: c.studies, series: c.series }, { patients: Number(sql!.patients), studies: Number(sql!.studies), series: Number(sql!.series) });
    answered++;
  }
  assert.ok(answered >= 1);
  // Asked again alone (its answer kept under a digest key), and the same list reversed (another key, counted again).
  for (const list of [asked, [...asked].reverse()]) {
    const r = await s.post('/v3/cohort/counts', { terms: { PatientID: list } });
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { series: number }).series, Number(sql!.series));
  }
});

test('a slow sender holding the slot is cut once its body is overdue, and the lane answers the next large body', async () => {
  const holder = await halfSent('/v3/cohort/counts', 100_000);
  const closed = new Promise<number>((r) => {
    const t0 = performance.now();
    holder.on('close', () => r(performance.now() - t0));
  });
  holder.on('error', () => {});
  // Due after the 5 s grace plus 100 KB at 1 MB/s; the socket closes a little after.
  const ms = await closed;
  assert.ok(ms > 4000 && ms < 9000, `cut after ${ms.toFixed(0)} ms`);
  for (let i = 0; i < 100 && (await laneStats()).busy !== 0; i++) await new Promise((r) => setTimeout(r, 20));
  const next = await s.post('/v3/cohort/counts', { terms: { PatientID: ids(1000) } });
  assert.equal(next.status, 200);
});
