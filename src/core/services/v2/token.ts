// next_page tokens of /v2 manifests: stateless. A token carries the whole
// query and where the next page starts (row offset and the sort key of the
// last row sent), compressed and signed with HMAC-SHA256. The key derives
// from the data release and a secret (IDQS_TOKEN_SECRET, or the random one
// kept in the cache folder: see ./token-secret.ts), so any replica sharing
// the secret and serving the same release accepts it after any restart, a
// token of another release is refused, and a forged or tampered token is a
// 400, never a wrong page.
//
// A token is `<tag>.<payload>.<signature>`. The tag names the key (a digest
// of it: it discloses nothing of the secret), so a token another release's
// server issued is refused with that reason. Checks run cheapest first and
// nothing is decompressed before its signature holds: length, then the tag,
// then the signature, then inflation with an output limit, then the shape of
// every member. Whatever fails, the answer is a refusal, never an exception.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { JsonValue } from '../../engine/json.ts';

export interface ManifestQuery {
  /** The filter set as applied (canonical names). */
  filters: Record<string, (string | number)[]>;
  /** Requested fields as answered (canonical names or public-service aliases). */
  fields: string[];
  counts: boolean;
  group_size: boolean;
}

export interface PageCursor {
  /** Rows already sent. */
  offset: number;
  /** Sort key (field values) of the last row sent; null at the start. */
  after: JsonValue[] | null;
  /** Rows in the whole result, once known. */
  total: number | null;
  /** Page size to continue with when the caller gives none. */
  pageSize: number;
}

export interface TokenBody {
  query: ManifestQuery;
  cursor: PageCursor;
}

export interface TokenLimits {
  /** Longest token accepted, in characters. */
  maxChars: number;
  /** Most bytes a payload may inflate to. */
  maxJsonBytes: number;
}

const SIG_BYTES = 16;
const TAG_CHARS = 8;
const VERSION = 3;
const B64URL = /^[A-Za-z0-9_-]+$/;

/** Why a token was refused. */
export type TokenRefusal = 'malformed' | 'other_release';

const isInt = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const isScalar = (v: unknown) => v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** The members of a decoded payload, or null when any has the wrong shape. */
function readBody(a: unknown): TokenBody | null {
  if (!Array.isArray(a) || a.length !== 9 || a[0] !== VERSION) return null;
  const [, filters, fields, counts, groupSize, offset, after, total, pageSize] = a as unknown[];
  if (filters === null || typeof filters !== 'object' || Array.isArray(filters)) return null;
  for (const v of Object.values(filters)) {
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' || (typeof x === 'number' && Number.isFinite(x)))) return null;
  }
  if (!Array.isArray(fields) || !fields.every((f) => typeof f === 'string')) return null;
  if ((counts !== 0 && counts !== 1) || (groupSize !== 0 && groupSize !== 1)) return null;
  if (!isInt(offset, 0) || !isInt(pageSize, 1)) return null;
  if (total !== null && !(isInt(total, 0) && offset <= total)) return null;
  if (after !== null && !(Array.isArray(after) && after.every(isScalar))) return null;
  // A cursor past the start names the row it follows, and one at the start none.
  if ((offset === 0) !== (after === null)) return null;
  return {
    query: { filters: filters as ManifestQuery['filters'], fields: fields as string[], counts: counts === 1, group_size: groupSize === 1 },
    cursor: { offset, after: after as JsonValue[] | null, total: total as number | null, pageSize },
  };
}

export class TokenCodec {
  private readonly key: Buffer;
  /** Names the key in the token; a digest of it, so it discloses nothing of the secret. */
  private readonly tag: string;

  constructor(
    release: string,
    secret: string,
    private readonly limits: TokenLimits = { maxChars: 1 << 20, maxJsonBytes: 8 << 20 },
  ) {
    this.key = createHmac('sha256', `idqs-v2-token\n${secret}`).update(release).digest();
    this.tag = createHmac('sha256', this.key).update('tag').digest('base64url').slice(0, TAG_CHARS);
  }

  private sign(signed: string): Buffer {
    return createHmac('sha256', this.key).update(signed).digest().subarray(0, SIG_BYTES);
  }

  encode(body: TokenBody): string {
    const { query: q, cursor: c } = body;
    const compact = [VERSION, q.filters, q.fields, q.counts ? 1 : 0, q.group_size ? 1 : 0, c.offset, c.after, c.total, c.pageSize];
    const signed = `${this.tag}.${deflateRawSync(Buffer.from(JSON.stringify(compact))).toString('base64url')}`;
    return `${signed}.${this.sign(signed).toString('base64url')}`;
  }

  /** The token's content, or why it is refused: malformed, forged or tampered with, or issued for another release. */
  decode(token: string): TokenBody | TokenRefusal {
    if (token.length > this.limits.maxChars) return 'malformed';
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) return 'malformed';
    const [tag, payload, sig] = parts as [string, string, string];
    if (tag.length !== TAG_CHARS) return 'malformed';
    if (tag !== this.tag) return 'other_release';
    const given = Buffer.from(sig, 'base64url');
    // Only the canonical spelling of the signature: no two strings are the same token.
    if (given.length !== SIG_BYTES || given.toString('base64url') !== sig) return 'malformed';
    if (!timingSafeEqual(given, this.sign(`${tag}.${payload}`))) return 'malformed';
    try {
      const json = inflateRawSync(Buffer.from(payload, 'base64url'), { maxOutputLength: this.limits.maxJsonBytes });
      return readBody(JSON.parse(json.toString('utf8'))) ?? 'malformed';
    } catch {
      // Not deflate, inflating past the limit, or not JSON.
      return 'malformed';
    }
  }
}
