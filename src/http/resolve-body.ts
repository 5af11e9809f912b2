// The JSON body of POST /v3/series/resolve, read as it arrives: a saved
// manifest can take tens of MB, and parsing or splitting that in one piece
// would hold the event loop (every other request) for seconds. The bytes are
// scanned chunk by chunk: the `text` member is cut into lines at each newline
// escape, each line decoded on its own, and the entries of `ids` are taken one
// by one; past the line limit the body is refused there and then, unread. The
// other members (`format`, or anything the schema then refuses) are small:
// they are parsed whole, within the ordinary body limit. A line longer than the
// saved-lines rule reads is kept only in part (the rule refuses it by length).
// What the body is, JSON.parse would say too; the lines of `text` are handed to
// the route beside the body (`textLinesOf`), whose `text` is left empty.

import { errorCodes, type FastifyRequest } from 'fastify';
import { field, msg, setting, tooLarge } from '../core/errors.ts';
import { MAX_LINE_CHARS } from '../core/rules/saved-lines.ts';
import { tooManyLines } from '../core/services/resolve.ts';

export interface ResolveBodyLimits {
  /** Most lines of text (or entries of ids). */
  maxLines: number;
  /** Most bytes of the whole body. */
  maxBytes: number;
  /** Most bytes of everything but the text and the strings of ids (IDQS_BODY_LIMIT). */
  otherBytes: number;
}

/** Bytes of a line kept: enough that a longer one is, decoded, longer than the rule reads (6 bytes at most per character). */
const LINE_BYTES = 8 * MAX_LINE_CHARS;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isHex = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
const ESCAPES = new Set([...'"\\/bfnrtu'].map((c) => c.charCodeAt(0)));

const syntax = () => new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();

/** JSON.parse refusing what Fastify's parser refuses: a __proto__ key, or a constructor key holding a prototype. */
function parseSafe(text: string): unknown {
  try {
    return JSON.parse(text, (key, value: unknown) => {
      if (key === '__proto__' || (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype'))) throw new SyntaxError(key);
      return value;
    });
  } catch {
    throw syntax();
  }
}

/**
 * A JSON string read piece by piece: its raw bytes (escapes undecoded). Past LINE_BYTES the rest is not kept,
 * and the value is the bytes kept as Latin-1: longer than the saved-lines rule reads, which refuses it by length alone.
 */
class RawString {
  private parts: Buffer[] = [];
  private bytes = 0;
  private escaped = false;
  private truncated = false;
  /** No byte was kept (the decoded value is empty). */
  get empty(): boolean {
    return this.bytes === 0;
  }
  add(b: Buffer): void {
    if (this.truncated || b.length === 0) return;
    let keep = b;
    if (this.bytes + b.length > LINE_BYTES) {
      keep = b.subarray(0, LINE_BYTES - this.bytes);
      this.truncated = true;
    }
    if (keep.includes(BACKSLASH)) this.escaped = true;
    // A copy: the chunk it comes from may be a view of a buffer the socket reuses.
    this.parts.push(Buffer.from(keep));
    this.bytes += keep.length;
  }
  /** Forget the last `n` bytes (the start of an escape that ends the line). */
  dropLast(n: number): void {
    if (this.truncated || n === 0) return;
    const raw = Buffer.concat(this.parts);
    this.parts = [raw.subarray(0, raw.length - n)];
    this.bytes -= n;
  }
  /** The decoded value, and a fresh start. */
  take(): string {
    // A blank line (the most common line of a huge body) allocates nothing.
    if (this.bytes === 0) {
      this.escaped = false;
      this.truncated = false;
      this.parts.length = 0;
      return '';
    }
    const raw = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    // Every byte was checked as the string was read: decoding cannot fail.
    const out = this.truncated ? raw.toString('latin1') : this.escaped ? (JSON.parse(`"${raw.toString('utf8')}"`) as string) : raw.toString('utf8');
    this.parts = [];
    this.bytes = 0;
    this.escaped = false;
    this.truncated = false;
    return out;
  }
}

const skipSpace = (c: Buffer, i: number) => {
  while (i < c.length && isSpace(c[i]!)) i++;
  return i;
};
const hexValue = (b: number) => (b <= 0x39 ? b - 0x30 : (b | 0x20) - 0x57);

const linesOfBody = new WeakMap<object, string[]>();
/** The lines of a body's text member as the reader split them (the body's own `text` is left empty). */
export const textLinesOf = (body: object): string[] | undefined => linesOfBody.get(body);

type State =
  | 'start' | 'whole' | 'key-or-end' | 'next-key' | 'key' | 'colon' | 'value' | 'after-value' | 'done'
  | 'text' | 'ids-first' | 'ids-element' | 'id' | 'ids-after' | 'other';

/** A scanner of the resolve body: `write` each chunk as it comes, then `end`. Throws what the route answers (413, 400). */
export class ResolveBodyReader {
  private state: State = 'start';
  private key = '';
  private readonly members: [string, unknown][] = [];
  private lines: string[] | null = null;
  private ids: unknown[] = [];
  private readonly str = new RawString();
  /** Inside a string: 0 plain, 1 after a backslash, 2-5 the hex digits of \u read so far (their value in `hex`). */
  private esc = 0;
  private hex = 0;
  /** A value other than text and ids (or an entry of ids that is not a string): its raw bytes, nesting, and where it goes. */
  private other: Buffer[] = [];
  private depth = 0;
  private inString = false;
  private otherEscape = false;
  private otherInIds = false;
  private otherBytes = 0;
  private bytes = 0;

  constructor(private readonly limits: ResolveBodyLimits) {}

  /** Bytes written so far. */
  get received(): number {
    return this.bytes;
  }

  /** Refuse a body of more bytes than the route takes (also called with the declared length, before reading). */
  checkSize(bytes: number): void {
    if (bytes > this.limits.maxBytes) {
      throw tooLarge(`The request body exceeds the ${this.limits.maxBytes}-byte limit of this route (${this.limits.maxLines} lines of ${Math.round(this.limits.maxBytes / this.limits.maxLines)} bytes on average).`);
    }
  }

  write(chunk: Buffer): void {
    this.bytes += chunk.length;
    this.checkSize(this.bytes);
    let i = 0;
    while (i < chunk.length) i = this.step(chunk, i);
  }

  /** The body, once every byte was written. */
  end(): Record<string, unknown> {
    if (this.state === 'whole') return parseSafe(this.takeOther()) as Record<string, unknown>;
    if (this.state === 'start') throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
    if (this.state !== 'done') throw syntax();
    const body: Record<string, unknown> = {};
    for (const [k, v] of this.members) body[k] = v;
    if (this.lines !== null && body.text === '') linesOfBody.set(body, this.lines);
    return body;
  }

  /** Read from `i` in the current state; the index of the next byte to read. */
  private step(c: Buffer, i: number): number {
    const s = this.state;
    if (s === 'text' || s === 'key' || s === 'id') return this.readString(c, i);
    if (s === 'other') return this.readOther(c, i);
    if (s === 'whole') {
      this.keepOther(c.subarray(i));
      return c.length;
    }
    i = skipSpace(c, i);
    if (i === c.length) return i;
    const b = c[i]!;
    switch (s) {
      case 'start':
        if (b !== 0x7b) {
          // Not an object: the schema refuses it; it is read whole (within the ordinary limit) to say why.
          this.state = 'whole';
          return i;
        }
        this.state = 'key-or-end';
        break;
      case 'key-or-end':
      case 'next-key':
        if (b === 0x7d && s === 'key-or-end') this.state = 'done';
        else if (b === QUOTE) this.state = 'key';
        else throw syntax();
        break;
      case 'colon':
        if (b !== 0x3a) throw syntax();
        this.state = 'value';
        break;
      case 'value':
        if (this.key === 'text' && b === QUOTE) {
          this.lines = [];
          this.state = 'text';
        } else if (this.key === 'ids' && b === 0x5b) {
          this.ids = [];
          this.state = 'ids-first';
        } else {
          this.startOther(false);
          return i;
        }
        break;
      case 'after-value':
        if (b === 0x2c) this.state = 'next-key';
        else if (b === 0x7d) this.state = 'done';
        else throw syntax();
        break;
      case 'ids-after':
        if (b === 0x2c) this.state = 'ids-element';
        else if (b === 0x5d) this.endIds();
        else throw syntax();
        break;
      case 'ids-first':
      case 'ids-element':
        if (b === 0x5d && s === 'ids-first') {
          this.endIds();
          break;
        }
        if (this.ids.length >= this.limits.maxLines) throw tooManyLines(this.ids.length + 1, this.limits.maxLines, 'ids', true);
        if (b !== QUOTE) {
          this.startOther(true);
          return i;
        }
        this.state = 'id';
        break;
      case 'done':
        throw syntax();
    }
    return i + 1;
  }

  private endIds(): void {
    this.members.push([this.key, this.ids]);
    this.state = 'after-value';
  }

  /** A string's closing quote was read. */
  private closeString(): void {
    switch (this.state) {
      case 'key':
        this.key = this.str.take();
        this.countOther(this.key.length);
        if (this.key === '__proto__') throw syntax();
        this.state = 'colon';
        break;
      case 'text':
        if (!this.str.empty) this.addLine(false);
        this.members.push([this.key, '']);
        this.state = 'after-value';
        break;
      default:
        this.ids.push(this.str.take());
        this.state = 'ids-after';
    }
  }

  /** A line of text ends (at a newline, or at the end of the text). */
  private addLine(newline: boolean): void {
    const lines = this.lines!;
    let line = this.str.take();
    if (newline && line.endsWith('\r')) line = line.slice(0, -1);
    lines.push(line);
    if (lines.length > this.limits.maxLines) throw tooManyLines(lines.length, this.limits.maxLines, 'text', newline);
  }

  /**
   * The bytes of a JSON string from `i` (its opening quote read) into `str`, checked as JSON.parse checks them;
   * in text, each newline (\n, or \u000a) ends a line.
   */
  private readString(c: Buffer, i: number): number {
    const text = this.state === 'text';
    let from = i;
    for (; i < c.length; i++) {
      const b = c[i]!;
      if (this.esc === 0) {
        if (b === QUOTE) {
          if (i > from) this.str.add(c.subarray(from, i));
          this.closeString();
          return i + 1;
        }
        if (b === BACKSLASH) this.esc = 1;
        else if (b < 0x20) throw syntax();
        continue;
      }
      let newline: boolean;
      let size = 6;
      if (this.esc === 1) {
        if (!ESCAPES.has(b)) throw syntax();
        if (b === 0x75) {
          this.esc = 2;
          this.hex = 0;
          continue;
        }
        this.esc = 0;
        newline = text && b === 0x6e;
        size = 2;
      } else {
        if (!isHex(b)) throw syntax();
        this.hex = this.hex * 16 + hexValue(b);
        if (++this.esc < 6) continue;
        this.esc = 0;
        newline = text && this.hex === 0x0a;
      }
      if (newline) {
        // The escape (2 or 6 bytes) ends here; its first bytes may have come with the previous chunk, already kept.
        const here = Math.min(size, i + 1 - from);
        if (i + 1 - here > from) this.str.add(c.subarray(from, i + 1 - here));
        this.str.dropLast(size - here);
        this.addLine(true);
        from = i + 1;
      }
    }
    if (from < c.length) this.str.add(c.subarray(from));
    return i;
  }

  private startOther(inIds: boolean): void {
    this.state = 'other';
    this.otherInIds = inIds;
    this.depth = 0;
    this.inString = false;
    this.otherEscape = false;
  }

  /** Read a value other than text and ids (or an entry of ids that is not a string) up to its end; JSON.parse reads it. */
  private readOther(c: Buffer, i: number): number {
    const from = i;
    let ended = false;
    for (; i < c.length && !ended; i++) {
      const b = c[i]!;
      if (this.inString) {
        if (this.otherEscape) this.otherEscape = false;
        else if (b === BACKSLASH) this.otherEscape = true;
        else if (b === QUOTE) {
          this.inString = false;
          ended = this.depth === 0;
        }
      } else if (b === QUOTE) this.inString = true;
      else if (b === 0x7b || b === 0x5b) this.depth++;
      else if (b === 0x7d || b === 0x5d || b === 0x2c || isSpace(b)) {
        // At depth 0 this byte ends a number, true, false or null: it belongs to the enclosing object or array.
        if (this.depth === 0) break;
        if (b !== 0x2c && !isSpace(b)) ended = --this.depth === 0;
      }
    }
    this.keepOther(c.subarray(from, i));
    if (ended || i < c.length) {
      const value = parseSafe(this.takeOther());
      if (this.otherInIds) {
        this.ids.push(value);
        this.state = 'ids-after';
      } else {
        this.members.push([this.key, value]);
        this.state = 'after-value';
      }
    }
    return i;
  }

  private countOther(n: number): void {
    this.otherBytes += n;
    if (this.otherBytes > this.limits.otherBytes) {
      throw tooLarge(
        msg`Besides the lines of ${field('text')} and the strings of ${field('ids')}, a body takes at most ${this.limits.otherBytes} bytes (${setting('IDQS_BODY_LIMIT')}).`,
      );
    }
  }

  private keepOther(b: Buffer): void {
    this.countOther(b.length);
    this.other.push(Buffer.from(b));
  }

  private takeOther(): string {
    const text = Buffer.concat(this.other).toString('utf8');
    this.other = [];
    return text;
  }
}

/**
 * The content-type parser of the route: the body read and refused as it arrives (the ordinary parser reads it all
 * first). Once refused, the rest of the body is discarded as it comes and the connection closed after the answer.
 */
export function resolveBodyParser(limits: ResolveBodyLimits) {
  return (req: FastifyRequest, payload: NodeJS.ReadableStream, done: (err: Error | null, body?: unknown) => void): void => {
    const declared = Number(req.headers['content-length']);
    const reader = new ResolveBodyReader(limits);
    const stop = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onEnd);
    };
    const fail = (e: unknown) => {
      stop();
      done(e instanceof Error ? e : new Error(String(e)));
    };
    function onData(chunk: Buffer | string) {
      try {
        reader.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      } catch (e) {
        fail(e);
      }
    }
    function onEnd(err?: Error & { statusCode?: number }) {
      stop();
      if (err) {
        err.statusCode ??= 400;
        return done(err);
      }
      let body: unknown;
      try {
        body = reader.end();
      } catch (e) {
        return fail(e);
      }
      if (!Number.isNaN(declared) && reader.received !== declared) return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      done(null, body);
    }
    try {
      if (!Number.isNaN(declared)) reader.checkSize(declared);
    } catch (e) {
      return fail(e);
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onEnd);
    payload.resume();
  };
}
