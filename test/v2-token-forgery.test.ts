// /v2 page tokens as an attacker sees them: the signing secret is random and
// private unless configured, forged tokens (computed from the public release,
// fuzzed from a genuine one, well signed but ill-formed, or compression bombs)
// are all 400s that never echo the token, cost no memory, and never a 500.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, deflateRawSync } from 'node:zlib';
import { TokenCodec, type TokenBody } from '../src/core/services/v2/token.ts';
import { startServer, type TestServer } from './fixture.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const PREVIEW = '/v2/cohorts/manifest/preview';
const NEXT = `${PREVIEW}/nextPage`;
const BODY = { cohort_def: { filters: { Modality: ['CT'] } }, fields: ['SeriesInstanceUID'], page_size: 3 };

const dirs: string[] = [];
const servers: TestServer[] = [];
function cacheDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'idqs-token-'));
  dirs.push(d);
  return d;
}
async function server(overrides: Parameters<typeof startServer>[0]): Promise<TestServer> {
  const s = await startServer(overrides);
  servers.push(s);
  return s;
}

let plain: TestServer; // no IDQS_TOKEN_SECRET
let plainDir: string;
before(async () => {
  plainDir = cacheDir();
  plain = await server({ cacheDir: plainDir, tokenSecret: '' });
});
after(async () => {
  for (const s of servers) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function firstPage(s: TestServer): Promise<Json> {
  const r = await s.post(PREVIEW, BODY);
  assert.equal(r.status, 200);
  const j = (await r.json()) as Json;
  assert.ok(j.next_page, 'more than one page');
  return j;
}

/** Posts a token; asserts a 400 whose message does not carry it. */
async function refused(s: TestServer, token: string, what: string): Promise<Json> {
  const r = await s.post(NEXT, { next_page: token });
  const text = await r.text();
  assert.equal(r.status, 400, `${what}: ${text.slice(0, 300)}`);
  const j = JSON.parse(text) as Json;
  assert.equal(j.code, 400, what);
  assert.match(j.message, /^Invalid next_page token/, what);
  if (token.length >= 8) assert.ok(!text.includes(token), `${what}: the token is echoed`);
  return j;
}

test('without IDQS_TOKEN_SECRET a random secret is made once, private to its owner, and shared through the cache folder', async () => {
  const file = join(plainDir, 'token-secret');
  const st = statSync(file);
  assert.equal(st.mode & 0o777, 0o600, 'readable by its owner only');
  const secret = readFileSync(file, 'utf8').trim();
  assert.ok(secret.length >= 32, 'long enough to be a secret');
  assert.ok(!secret.includes(plain.ctx.dataset.identity), 'not derived from the release');

  const tok = (await firstPage(plain)).next_page as string;
  // Another process on the same cache folder (a restart, a worker) accepts the token and keeps the secret.
  const again = await server({ cacheDir: plainDir, tokenSecret: '' });
  const r = await again.post(NEXT, { next_page: tok });
  assert.equal(r.status, 200);
  assert.equal(((await r.json()) as Json).manifest.rowsReturned, 3);
  assert.equal(readFileSync(file, 'utf8').trim(), secret);
  // A server with its own cache folder made its own secret and refuses it.
  const elsewhere = await server({ cacheDir: cacheDir(), tokenSecret: '' });
  await refused(elsewhere, tok, 'token of another secret');
});

test('a token computed from the public release alone (no secret) is refused', async () => {
  const identity = plain.ctx.dataset.identity;
  const forger = new TokenCodec(identity, '');
  const forged = forger.encode({
    query: { filters: { Modality: ['CT'] }, fields: ['SeriesInstanceUID'], counts: false, group_size: false },
    cursor: { offset: 0, after: null, total: null, pageSize: 3 },
  });
  await refused(plain, forged, 'forged with the release identity');
});

test('well-signed tokens with any ill-formed member are 400s, never 500s or pages', async () => {
  // With a configured secret known to the test, every check after the signature is reachable.
  const s = await server({ cacheDir: cacheDir(), tokenSecret: 'known-to-the-test' });
  const codec = new TokenCodec(s.ctx.dataset.identity, 'known-to-the-test');
  const genuine = (await firstPage(s)).next_page as string;
  assert.equal((await s.post(NEXT, { next_page: genuine })).status, 200);
  const q = { filters: { Modality: ['CT'] }, fields: ['SeriesInstanceUID'], counts: false, group_size: false };
  const c = { offset: 3, after: ['1.2.3'], total: 10, pageSize: 3 };
  // Each changes one member of a well-formed body; as `any`, since a forger is not held to the types.
  const variants: [string, Json][] = [
    ['negative offset', { cursor: { ...c, offset: -1 } }],
    ['fractional offset', { cursor: { ...c, offset: 1.5 } }],
    ['offset past the total', { cursor: { ...c, offset: 11 } }],
    ['negative total', { cursor: { ...c, total: -4 } }],
    ['page size 0', { cursor: { ...c, pageSize: 0 } }],
    ['page size as SQL', { cursor: { ...c, pageSize: '3 UNION SELECT 1' } }],
    ['page size as text', { cursor: { ...c, pageSize: 'ten' } }],
    ['after as an object', { cursor: { ...c, after: { a: 1 } } }],
    ['after holding an object', { cursor: { ...c, after: [{ a: 1 }] } }],
    ['after too long', { cursor: { ...c, after: ['1.2.3', 'x', 'y'] } }],
    ['after missing past the start', { cursor: { ...c, after: null } }],
    ['unknown field', { query: { ...q, fields: ['NoSuchField'] } }],
    ['field not a string', { query: { ...q, fields: [7] } }],
    ['fields not a list', { query: { ...q, fields: 'SeriesInstanceUID' } }],
    ['unknown filter', { query: { ...q, filters: { NoSuchFilter: ['x'] } } }],
    ['filter values not a list', { query: { ...q, filters: { Modality: 'CT' } } }],
    ['filter value an object', { query: { ...q, filters: { Modality: [{}] } } }],
    ['filters a list', { query: { ...q, filters: [] } }],
  ];
  for (const [what, change] of variants) {
    const body = { query: { ...q, ...change.query }, cursor: { ...c, ...change.cursor } } as unknown as TokenBody;
    await refused(s, codec.encode(body), what);
  }
});

test('a compression bomb costs neither memory nor time, signed or not; a signed payload past the limit is refused', async () => {
  // 512 MB of '[' in 0.5 MB of deflate: blocks of 1 MB, each flushed so they can be repeated.
  const block = deflateRawSync(Buffer.alloc(1 << 20, 0x5b), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const bomb = Buffer.concat([...Array<Buffer>(512).fill(block), deflateRawSync(Buffer.alloc(0))]).toString('base64url');
  const genuine = (await firstPage(plain)).next_page as string;
  const [tag, , sig] = genuine.split('.');
  const before = process.resourceUsage().maxRSS;
  for (const token of [`${bomb}.${sig}`, `${tag}.${bomb}.${sig}`, `${tag}.${bomb}`, bomb]) await refused(plain, token, 'bomb');
  const grewMb = (process.resourceUsage().maxRSS - before) / 1024;
  assert.ok(grewMb < 128, `the server's peak memory grew by ${grewMb.toFixed(0)} MB`);

  // Signed with the real key, a payload that inflates past 8 × the body limit is refused before it is parsed.
  const s = await server({ cacheDir: cacheDir(), tokenSecret: 'k2', bodyLimit: 16_384 });
  const codec = new TokenCodec(s.ctx.dataset.identity, 'k2');
  const big = codec.encode({
    query: { filters: { Modality: Array<string>(40_000).fill('CT') }, fields: ['SeriesInstanceUID'], counts: false, group_size: false },
    cursor: { offset: 0, after: null, total: null, pageSize: 3 },
  });
  assert.ok(big.length < 16_384, 'fits in a request');
  await refused(s, big, 'inflates past the limit');
  // The codec refuses a token longer than its limit, however well signed.
  const small = new TokenCodec('r', 's', { maxChars: 64, maxJsonBytes: 1 << 20 });
  const long = small.encode({ query: { filters: { Modality: ['CT', 'MR', 'PT', 'SEG'] }, fields: ['SeriesInstanceUID', 'PatientID'], counts: false, group_size: false }, cursor: { offset: 0, after: null, total: null, pageSize: 3 } });
  assert.ok(long.length > 64);
  assert.equal(small.decode(long), 'malformed');
});

test('fuzz: 400 mutations of a genuine token are each a 400 (or the very page), never a 500', async () => {
  const genuine = (await firstPage(plain)).next_page as string;
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/%é\u0000 ';
  const mutate = (t: string): string => {
    switch (rnd(7)) {
      case 0: {
        const i = rnd(t.length);
        return t.slice(0, i) + alphabet[rnd(alphabet.length)] + t.slice(i + 1);
      }
      case 1:
        return t.slice(0, rnd(t.length));
      case 2:
        return t.slice(rnd(t.length));
      case 3: {
        const i = rnd(t.length);
        return t.slice(0, i) + alphabet[rnd(alphabet.length)] + t.slice(i);
      }
      case 4:
        return t.split('.').reverse().join('.');
      case 5:
        return Array.from({ length: 1 + rnd(200) }, () => alphabet[rnd(alphabet.length)]).join('');
      default:
        return `${t}.${t}`;
    }
  };
  let pages = 0;
  for (let i = 0; i < 400; i++) {
    const token = mutate(genuine);
    const r = await plain.post(NEXT, { next_page: token });
    const text = await r.text();
    if (token === genuine) {
      assert.equal(r.status, 200);
      pages++;
      continue;
    }
    assert.equal(r.status, 400, `${JSON.stringify(token)}: ${r.status} ${text.slice(0, 200)}`);
    if (token.length >= 8) assert.ok(!text.includes(token), 'the token is not echoed');
  }
  assert.ok(pages < 10, 'the mutations are not all the genuine token');
});
