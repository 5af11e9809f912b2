// The resolve route reads its body as it arrives (issue 34): a body of
// 25,000,000 newlines is refused past the line limit long before it is all
// sent, and other requests are answered meanwhile; a body at the limit still
// resolves every line. The reader of the body against JSON.parse and the
// old rule of lines (split at \r?\n, a final newline adding none), cut into
// chunks at every kind of place.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { ResolveBodyReader, textLinesOf } from '../src/http/resolve-body.ts';
import { startServer, type TestServer } from './fixture.ts';

const LIMITS = { maxLines: 1000, maxBytes: 1 << 24, otherBytes: 1 << 16 };

/** The body as the reader gives it, written in pieces cut at `cuts`; the lines of its text beside it. */
function readIn(body: Buffer, cuts: number[]): { body: Record<string, unknown>; lines: string[] | undefined } {
  const r = new ResolveBodyReader(LIMITS);
  let at = 0;
  for (const c of [...cuts, body.length]) {
    r.write(body.subarray(at, c));
    at = c;
  }
  const out = r.end();
  return { body: out, lines: textLinesOf(out) };
}

/** Lines of a text as a saved manifest has them, written here independently: split at \r?\n, a final empty piece dropped. */
function oracleLines(text: string): string[] {
  const parts = text.split(/\r?\n/);
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** A small deterministic random source (tests must not vary between runs). */
function rng(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s % n;
  };
}

test('the body reader gives what JSON.parse and the line rule give, wherever the chunks are cut', () => {
  const rand = rng(34);
  const pieces = ['a', '1.2.840.1', '\n', '\r\n', '\r', '"', '\\', '\t', 'é', '€', '😀', '\ud800', '\u2028', ' ', 'cp s3://b/x/* .', '#c', '\u000a'];
  for (let k = 0; k < 400; k++) {
    const text = Array.from({ length: rand(40) }, () => pieces[rand(pieces.length)]!).join('');
    let json = JSON.stringify(k % 3 === 0 ? { format: 'tsv', text } : { text, format: k % 2 ? 'json' : undefined });
    // Escapes of every form: \u000a for a newline, \u0022 for a quote, spaces between members.
    // (An escape is a backslash after an even number of them.)
    const escape = (c: string) => new RegExp(`(?<!\\\\)((?:\\\\\\\\)*)\\\\${c}`, 'g');
    if (k % 4 === 1) json = json.replace(escape('n'), '$1\\u000a').replace(escape('"'), '$1\\u0022').replace(/,"format"/, ' ,\n "format" ');
    if (k % 4 === 2) json = json.replace(escape('n'), '$1\\u000A');
    const bytes = Buffer.from(json);
    const cuts = [...new Set(Array.from({ length: rand(6) }, () => rand(bytes.length)))].sort((a, b) => a - b);
    const got = readIn(bytes, k % 5 === 0 ? Array.from({ length: bytes.length - 1 }, (_, i) => i + 1) : cuts);
    const want = JSON.parse(json) as { text: string; format?: string };
    assert.deepEqual(got.lines, oracleLines(want.text), json);
    assert.deepEqual(got.body, { ...want, text: '' }, json);
  }
  // ids: each entry as JSON.parse reads it, strings or not (the schema refuses the others).
  for (const ids of [['a', 'b\nc', '😀'], [], ['x', 5, { y: [1, '"]'] }, null, 'z']]) {
    const json = ` { "ids" : ${JSON.stringify(ids)} } `;
    const got = readIn(Buffer.from(json), [3, 9, 12]);
    assert.deepEqual(got.body, JSON.parse(json), json);
    assert.equal(got.lines, undefined);
  }
  // Not an object, or other members: as JSON.parse reads them.
  for (const json of ['[1,2]', '"text"', '{"text": 5}', '{"a": {"b": [true, null, -1.5e3]}, "text": "x"}', '{}']) {
    assert.deepEqual({ ...readIn(Buffer.from(json), [1, 4]).body }, { ...(JSON.parse(json) as object), ...(json.includes('"text": "x"') ? { text: '' } : {}) }, json);
  }
  // Not JSON: refused as the ordinary parser refuses it (400 invalid_json), an empty body as an empty one.
  for (const bad of ['{"text": "a', '{"text": "a"', '{"text": "a\nb"}', '{"text": "\\x"}', '{"text": "\\u12g4"}', '{"ids": ["a",]}', '{"text": "a",}', '{"a" 1}', '{"a": 1} x', '{"a": }', '{"a": [}', '{"__proto__": {}}', '{"a": {"__proto__": 1}}']) {
    assert.throws(() => readIn(Buffer.from(bad), [2]), (e: Error & { code?: string }) => e.code === 'FST_ERR_CTP_INVALID_JSON_BODY', bad);
    // JSON.parse refuses each too, but for the __proto__ keys, which Fastify's parser refuses.
    if (!bad.includes('__proto__')) assert.throws(() => JSON.parse(bad) as unknown, SyntaxError, bad);
  }
  assert.throws(() => readIn(Buffer.from('  '), []), (e: Error & { code?: string }) => e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY');
  // A line longer than the saved-lines rule reads is kept only in part, still longer than the rule reads.
  const long = readIn(Buffer.from(JSON.stringify({ text: `a\n${'é'.repeat(100_000)}\nb` })), [1000, 70_000]);
  assert.equal(long.lines!.length, 3);
  assert.ok(long.lines![1]!.length > 4096 && long.lines![1]!.length <= 8 * 4096, String(long.lines![1]!.length));
  assert.deepEqual([long.lines![0], long.lines![2]], ['a', 'b']);
});

test('the reader refuses past the line limit where it passes it, not at the end of the body', () => {
  for (const [json, member] of [[`{"text": "${'\\n'.repeat(5000)}`, 'text'], [`{"ids": [${'"1",'.repeat(5000)}`, 'ids']] as const) {
    const r = new ResolveBodyReader(LIMITS);
    // An unfinished body: the refusal comes while it is written.
    assert.throws(
      () => r.write(Buffer.from(json)),
      (e: Error) => new RegExp(`at least 1001 lines were sent; one request resolves at most 1000 lines .*IDQS_RESOLVE_MAX_LINES.*split the ${member}`).test(e.message),
    );
  }
  // Exactly the limit, with or without a final newline: read.
  for (const text of ['x\n'.repeat(1000), `${'x\n'.repeat(999)}x`]) assert.equal(readIn(Buffer.from(JSON.stringify({ text })), [7]).lines!.length, 1000);
  assert.throws(() => readIn(Buffer.from(JSON.stringify({ text: `${'x\n'.repeat(1000)}x` })), []), /1001 lines were sent/);
  // Members besides the lines are held to the ordinary body limit.
  assert.throws(() => readIn(Buffer.from(JSON.stringify({ text: 'a', other: 'y'.repeat(70_000) })), []), /at most 65536 bytes \(IDQS_BODY_LIMIT\)/);
});

let s: TestServer;
before(async () => {
  s = await startServer({ resolveMaxLines: 100_000 });
});
after(async () => s?.close());

const NEWLINES = 25_000_000;

test('25,000,000 newlines: a 413 naming the limit before the body is all sent, and counts answered meanwhile within 1 s', async () => {
  const url = new URL(s.url);
  const head = '{"text":"';
  const block = Buffer.from('\\n'.repeat(1 << 19)); // 1 MB: 524,288 newlines
  const blocks = Math.ceil(NEWLINES / (1 << 19));
  const total = head.length + blocks * block.length + 2;
  // Counts asked one after another, one due every 50 ms until the exchange is over; each timed from when it was
  // due, so that a held event loop (which delays the asking too) counts.
  const latencies: number[] = [];
  let exchanging = true;
  const probes = (async () => {
    const t0 = performance.now();
    for (let k = 0; exchanging; k++) {
      const due = t0 + k * 50;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      const r = await s.post('/v3/cohort/counts', { terms: {} });
      assert.equal(r.status, 200);
      await r.json();
      latencies.push(performance.now() - due);
    }
  })();
  const started = performance.now();
  const answer = await new Promise<{ text: string; sentWhenAnswered: number; ms: number }>((resolve, reject) => {
    const sock = connect(Number(url.port), url.hostname);
    let sent = 0;
    let answered = -1;
    let text = '';
    sock.on('data', (d: Buffer) => {
      if (answered < 0) answered = sent;
      text += d.toString('latin1');
    });
    const finish = () => resolve({ text, sentWhenAnswered: answered, ms: performance.now() - started });
    sock.on('close', finish);
    sock.on('error', () => {}); // a reset once the server closed: 'close' follows
    sock.on('connect', async () => {
      const write = (b: Buffer | string) => {
        sent += b.length;
        return sock.write(b) ? Promise.resolve() : new Promise<void>((r) => sock.once('drain', r));
      };
      try {
        await write(`POST /v3/series/resolve HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n${head}`);
        for (let i = 0; i < blocks && answered < 0 && !sock.destroyed; i++) await write(block);
        if (answered < 0 && !sock.destroyed) await write('"}');
        // Answered: this client stops sending, as curl does on an early answer, and reads to the server's close.
        setTimeout(() => sock.destroy(), 2000).unref();
      } catch (e) {
        reject(e as Error);
      }
    });
  });
  await new Promise((r) => setTimeout(r, 300));
  exchanging = false;
  await probes;
  // Refused where the limit was passed (200 KB in), not after reading the 50 MB.
  assert.ok(answer.sentWhenAnswered < total / 2, `answered after ${answer.sentWhenAnswered} of ${total} bytes`);
  assert.ok(latencies.length >= 2, `${latencies.length} counts`);
  const worst = Math.max(...latencies);
  assert.ok(worst < 1000, `slowest counts ${worst.toFixed(0)} ms during the exchange (${answer.ms.toFixed(0)} ms)`);
  const [status] = /^HTTP\/1\.1 (\d+)/.exec(answer.text)?.slice(1) ?? [];
  assert.equal(status, '413', answer.text.slice(0, 300));
  const json = JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
  assert.equal(json.error.code, 'too_large');
  assert.match(json.error.message, /at least 100001 lines were sent; one request resolves at most 100000 lines \(IDQS_RESOLVE_MAX_LINES\)/);
});

test('a body at the line limit, sent in pieces, resolves every line as SQL classes it; one more line is a 413', async () => {
  const at = await startServer({ resolveMaxLines: 3000 });
  try {
    // A folder the release serves is current; its SeriesInstanceUID is revised when prior_versions_index has an earlier version.
    const rows = await at.ctx.engine.rows(`SELECT crdc_series_uuid AS u, SeriesInstanceUID AS sid,
        SeriesInstanceUID IN (SELECT SeriesInstanceUID FROM prior_versions_index) AS revised FROM "index" ORDER BY hash(crdc_series_uuid) LIMIT 1000`);
    assert.equal(rows.length, 1000);
    const lines = rows.flatMap((r) => [`cp s3://idc-open-data/${String(r.u)}/* .\r`, String(r.u).toUpperCase(), String(r.sid)]);
    const text = `${lines.join('\n')}\n`;
    // Sent as a stream of small writes (the reader sees the body in many chunks), newlines written as \u000a too.
    const json = JSON.stringify({ format: 'json', text }).replace(/\\n/g, (m, i: number) => (i % 3 === 0 ? '\\u000a' : m));
    const res = await fetch(`${at.url}/v3/series/resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < json.length; i += 4093) c.enqueue(new TextEncoder().encode(json.slice(i, i + 4093)));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 200);
    const out = (await res.json()) as { totals: Record<string, number>; lines: { line: number; class: string; kind?: string; SeriesInstanceUID?: string }[] };
    const revised = rows.filter((r) => r.revised === true).length;
    assert.deepEqual(out.totals, { lines: 3000, blank: 0, comments: 0, header: 0, current: 3000 - revised, revised, removed: 0, unknown: 0, invalid: 0 });
    out.lines.forEach((l, i) => {
      const r = rows[Math.floor(i / 3)]!;
      assert.deepEqual([l.line, l.class, l.kind, l.SeriesInstanceUID], [i + 1, i % 3 === 2 && r.revised === true ? 'revised' : 'current', i % 3 === 2 ? 'SeriesInstanceUID' : 'crdc_series_uuid', r.sid], `line ${i + 1}`);
    });
    const over = await at.post('/v3/series/resolve', { text: `${text}x` });
    assert.equal(over.status, 413);
    assert.match(((await over.json()) as { error: { message: string } }).error.message, /^3001 lines were sent; one request resolves at most 3000 lines \(IDQS_RESOLVE_MAX_LINES\): split the text into parts\.$/);
    // A text/plain body is refused unread: the route reads JSON.
    const plain = await fetch(`${at.url}/v3/series/resolve`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: text });
    assert.equal(plain.status, 415);
  } finally {
    await at.close();
  }
});
