// next_page tokens of /v2 manifests: stateless. A token carries the whole
// query and where the next page starts (row offset and the sort key of the
// last row sent), compressed and signed with HMAC-SHA256. The key derives
// from the data release (plus IDQS_TOKEN_SECRET when set), so any replica
// serving the same release accepts it after any restart, a token of another
// release is refused, and a tampered token is a 400, never a wrong page.
// The payload names its release (a short tag of the key), so a token that a
// replica of the previous release issued, presented during a release switch,
// is refused with that reason rather than as malformed.

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

const SIG_BYTES = 16;

/** Why a token was refused. */
export type TokenRefusal = 'malformed' | 'other_release';

export class TokenCodec {
  private readonly key: Buffer;
  /** Names the release in the payload; derived from the key, so it discloses nothing of the secret. */
  private readonly tag: string;

  constructor(release: string, secret = '') {
    this.key = createHmac('sha256', `idqs-v2-token\n${secret}`).update(release).digest();
    this.tag = createHmac('sha256', this.key).update('tag').digest('base64url').slice(0, 8);
  }

  private sign(payload: Buffer): Buffer {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, SIG_BYTES);
  }

  encode(body: TokenBody): string {
    const { query: q, cursor: c } = body;
    const compact = [2, this.tag, q.filters, q.fields, q.counts ? 1 : 0, q.group_size ? 1 : 0, c.offset, c.after, c.total, c.pageSize];
    const payload = deflateRawSync(Buffer.from(JSON.stringify(compact)));
    return `${payload.toString('base64url')}.${this.sign(payload).toString('base64url')}`;
  }

  /** The token's content, or why it is refused: malformed or tampered with, or issued for another release. */
  decode(token: string): TokenBody | TokenRefusal {
    const dot = token.indexOf('.');
    if (dot <= 0) return 'malformed';
    try {
      const payload = Buffer.from(token.slice(0, dot), 'base64url');
      const sig = Buffer.from(token.slice(dot + 1), 'base64url');
      const signed = sig.length === SIG_BYTES && timingSafeEqual(sig, this.sign(payload));
      const a = JSON.parse(inflateRawSync(payload).toString('utf8')) as unknown[];
      if (!Array.isArray(a) || a[0] !== 2 || a.length !== 10) return 'malformed';
      if (!signed) return typeof a[1] === 'string' && a[1] !== this.tag ? 'other_release' : 'malformed';
      const [, , filters, fields, counts, groupSize, offset, after, total, pageSize] = a;
      return {
        query: { filters: filters as ManifestQuery['filters'], fields: fields as string[], counts: counts === 1, group_size: groupSize === 1 },
        cursor: { offset: offset as number, after: after as JsonValue[] | null, total: total as number | null, pageSize: pageSize as number },
      };
    } catch {
      return 'malformed';
    }
  }
}
