// The cohort index as a file beside the database (`<db>.cohort-index`), so a
// start loads it (typed arrays read straight from the file, no scan of the
// engine) instead of building it. Layout: 8 bytes of magic, the header's
// length (u32), the CRC-32 of everything after the first 16 bytes (u32), the
// header (JSON: dictionaries, bins, totals, and where each array lies), then
// the arrays, each at an 8-byte aligned offset. The header carries a key made
// of the database's identity and this format's version: a file of another
// database or an older build is stale, a file whose CRC or length does not
// match is damaged; neither is ever served (the index is built again).
// A start keeps only what counts and pages need (about 55 MB of the full
// corpus's 214); the facet codes, the entities' orders, most range columns and
// the identifier dictionaries are read from the same (checksummed) file on
// first use. Each of those parts has its own checksum, taken at load: a file
// changed in place under a running server (copied over, rewritten by another
// process, a disk fault) is caught on that first use, the index is dropped
// (answers come from SQL while it is built again) and the operator is told;
// its bytes never reach an answer.

import { createHash } from 'node:crypto';
import fs, { constants, existsSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import { access, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { removeDeadLeftovers, withCacheLock } from '../../cache-lock.ts';
import { IdqsError } from '../../errors.ts';
import { ATTRIBUTE_BY_NAME, ATTRIBUTES } from '../../registry/attributes.ts';
import type { Edges } from '../facets/bins.ts';
import type { Entity, FacetColumn, FacetTable, RangeColumn, TermColumn } from '../facets/table.ts';
import type { CohortIndex, IndexedColumn } from './build.ts';
import { findString, type SortedStrings } from './identifiers.ts';
import type { Totals } from './totals.ts';

/**
 * Bump when what the build computes changes (facets/table.ts, facets/bins.ts,
 * cohort-index/build.ts, identifiers.ts) or this layout does: older files then
 * no longer match and are rebuilt.
 */
const FORMAT = 2;
const MAGIC = Buffer.from('IDQSCIX\n', 'latin1');
const PREFIX = 16;
const READ_PIECE = 8 << 20;
/** Pieces not kept at load are checksummed through buffers of this size. */
const SCRATCH = 1 << 20;

const ARRAYS = { u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f64: Float64Array } as const;
type ArrayKind = keyof typeof ARRAYS;
type Typed = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

/** Where one array lies: its element type, byte offset in the file, and length. */
interface Ref {
  t: ArrayKind;
  o: number;
  n: number;
}

interface DictRef {
  bytes: Ref;
  offsets: Ref;
  targets: Ref;
}

type FacetEntry =
  | { name: string; kind: 'term'; slot: number; values: string[] }
  | { name: string; kind: 'range'; slot: number; edges: Edges; sorted: string[] | null; values: Ref }
  | { name: string; kind: 'identifier' };

type IndexEntry =
  | { name: string; kind: 'coded'; codes: Ref; frequency: Ref; dict: DictRef | null }
  | { name: string; kind: 'number' }
  | { name: string; kind: 'rows'; dict: DictRef };

interface Header {
  key: string;
  bytes: number;
  /** Where the lazy arrays begin (read on first use, not at load). */
  lazyFrom: number;
  rows: number;
  width: number;
  slotSizes: number[];
  codes: Ref;
  facet: FacetEntry[];
  entities: Record<keyof FacetTable['entities'], { ids: Ref | null; order: Ref | null }>;
  positionOf: Ref;
  columns: IndexEntry[];
  patients: Ref;
  studies: Ref;
  series: Ref | null;
  instances: Ref;
  sizeMb: Ref;
  manifestOrder: Ref | null;
  manifestRank: Ref | null;
  rowidOf: Ref;
  adjacent: boolean;
  all: Totals;
}

/** The file of a database's cohort index. */
export const indexFileOf = (db: string) => `${db}.cohort-index`;

/**
 * The key a file must carry to be used with this database: its content
 * identity, this format and registry, and the database file itself (inode,
 * size, modification time: the index holds the engine's row ids, which a
 * rebuild of the same data need not keep; a server opens it read-only, so
 * these do not change while it is in use).
 */
export function indexKey(identity: string, db: string): string {
  const registry = JSON.stringify(ATTRIBUTES.map((a) => [a.name, a.kind, a.categorical, a.date ?? false, a.collection?.column ?? null]));
  const st = statSync(db);
  return createHash('sha256').update(`idqs-cohort-index-${FORMAT}\n${identity}\n${registry}\n${st.ino} ${st.size} ${st.mtimeMs}\n`).digest('hex').slice(0, 32);
}

const kindOf = (a: Typed): ArrayKind =>
  a instanceof Uint8Array ? 'u8' : a instanceof Uint16Array ? 'u16' : a instanceof Uint32Array ? 'u32' : a instanceof Int32Array ? 'i32' : 'f64';

/**
 * Lays the arrays out, each once however often the index refers to it: those
 * read at load first, then the lazy ones (read from the file on first use).
 */
class Layout {
  private readonly eager: Typed[] = [];
  private readonly lazy: Typed[] = [];
  private readonly refs = new Map<Typed, Ref>();
  lazyFrom = 0;
  size = 0;

  put(a: Typed, lazy = false): Ref {
    const known = this.refs.get(a);
    if (known) return known;
    const ref: Ref = { t: kindOf(a), o: 0, n: a.length };
    this.refs.set(a, ref);
    (lazy ? this.lazy : this.eager).push(a);
    return ref;
  }

  /** An identifier dictionary: lazy, since most filters never name one (SeriesInstanceUID's is a third of the file). */
  dict(d: SortedStrings): DictRef {
    return { bytes: this.put(new Uint8Array(d.bytes.buffer, d.bytes.byteOffset, d.bytes.byteLength), true), offsets: this.put(d.offsets, true), targets: this.put(d.targets, true) };
  }

  get arrays(): Typed[] {
    return [...this.eager, ...this.lazy];
  }

  /** Places the arrays from `start` (after the header), 8-byte aligned. */
  place(start: number): void {
    let at = start;
    for (const a of this.eager) {
      this.refs.get(a)!.o = at;
      at += Math.ceil(a.byteLength / 8) * 8;
    }
    this.lazyFrom = at;
    for (const a of this.lazy) {
      this.refs.get(a)!.o = at;
      at += Math.ceil(a.byteLength / 8) * 8;
    }
    this.size = at;
  }
}

function headerOf(ix: CohortIndex, key: string, layout: Layout): Omit<Header, 'bytes' | 'lazyFrom'> {
  const t = ix.table;
  const facet: FacetEntry[] = [];
  for (const [name, c] of t.columns) {
    if (c.kind === 'term') facet.push({ name, kind: 'term', slot: c.slot, values: c.values });
    else if (c.kind === 'range') facet.push({ name, kind: 'range', slot: c.slot, edges: c.edges, sorted: c.sorted, values: layout.put(c.values) });
    else if (c.kind === 'identifier') facet.push({ name, kind: 'identifier' });
    // Collection columns come from collections_index at load (a small table).
  }
  const entity = (e: Entity) => ({ ids: e.ids ? layout.put(e.ids) : null, order: e.order ? layout.put(e.order) : null });
  const columns: IndexEntry[] = [];
  for (const [name, c] of ix.columns) {
    if (c.kind === 'number') columns.push({ name, kind: 'number' });
    else if (c.kind === 'rows') columns.push({ name, kind: 'rows', dict: layout.dict(c.dict) });
    else {
      const d = c.values === null ? (c.dict ?? null) : null;
      if (c.values === null && !d) throw new Error(`cohort index: the dictionary of ${name} is not kept, so it cannot be written`);
      columns.push({ name, kind: 'coded', codes: layout.put(c.codes), frequency: layout.put(c.frequency), dict: d ? layout.dict(d) : null });
    }
  }
  return {
    key,
    rows: t.rows,
    width: t.width,
    slotSizes: t.slotSizes,
    codes: layout.put(t.codes),
    facet,
    entities: { patients: entity(t.entities.patients), studies: entity(t.entities.studies), series: entity(t.entities.series) },
    positionOf: layout.put(t.positionOf),
    columns,
    patients: layout.put(ix.patients),
    studies: layout.put(ix.studies),
    series: ix.series ? layout.put(ix.series) : null,
    instances: layout.put(ix.instances),
    sizeMb: layout.put(ix.sizeMb),
    manifestOrder: ix.manifestOrder ? layout.put(ix.manifestOrder) : null,
    manifestRank: ix.manifestRank ? layout.put(ix.manifestRank) : null,
    rowidOf: layout.put(ix.rowidOf),
    adjacent: ix.adjacent,
    all: ix.all,
  };
}

/** Writes the index to `path` (streamed: one array at a time), whole or not at all: a partial file is renamed into place only when complete. */
async function writeFileOf(ix: CohortIndex, key: string, path: string, assertOwned: () => void): Promise<void> {
  const layout = new Layout();
  const head = headerOf(ix, key, layout);
  // The header holds the arrays' offsets, which depend on its length: leave room for their digits (at most 16 per array).
  const start = Math.ceil((PREFIX + Buffer.byteLength(JSON.stringify({ ...head, bytes: 0, lazyFrom: 0 })) + 16 * layout.arrays.length + 64) / 8) * 8;
  layout.place(start);
  const json = JSON.stringify({ ...head, bytes: layout.size, lazyFrom: layout.lazyFrom });
  if (PREFIX + Buffer.byteLength(json) > start) throw new Error('cohort index file: the header outgrew its room');
  const tmp = `${path}.partial-${process.pid}`;
  const fh = await open(tmp, 'w');
  try {
    const header = Buffer.alloc(start - PREFIX, 0x20);
    header.write(json, 0, 'utf8');
    let crc = crc32(header);
    let pos = PREFIX;
    await fh.write(header, 0, header.length, pos);
    pos += header.length;
    const pad = Buffer.alloc(8);
    for (const a of layout.arrays) {
      const b = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      await fh.write(b, 0, b.length, pos);
      crc = crc32(b, crc);
      pos += b.length;
      const rest = (8 - (b.length % 8)) % 8;
      if (rest > 0) {
        await fh.write(pad, 0, rest, pos);
        crc = crc32(pad.subarray(0, rest), crc);
        pos += rest;
      }
    }
    const prefix = Buffer.alloc(PREFIX);
    MAGIC.copy(prefix, 0);
    prefix.writeUInt32LE(Buffer.byteLength(json), 8);
    prefix.writeUInt32LE(crc, 12);
    await fh.write(prefix, 0, PREFIX, 0);
    await fh.sync();
  } catch (e) {
    await fh.close();
    await rm(tmp, { force: true });
    throw e;
  }
  await fh.close();
  try {
    assertOwned();
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

const readAt = promisify(fs.read);

/** Closes the descriptor a loaded index keeps for its lazy arrays once the index is gone. */
const descriptors = new FinalizationRegistry<number>((fd) => fs.close(fd, () => {}));

const bytesOf = (ref: Ref) => ref.n * ARRAYS[ref.t].BYTES_PER_ELEMENT;

const isRef = (x: unknown): x is Ref => typeof x === 'object' && x !== null && 't' in x && 'o' in x && 'n' in x;

/** Every array the header refers to (once per offset). */
function refsOf(x: unknown, out = new Map<number, Ref>()): Map<number, Ref> {
  // A zero-length array may share its offset with the next one: the longer one is what lies there.
  if (isRef(x)) {
    const known = out.get(x.o);
    if (!known || bytesOf(known) < bytesOf(x)) out.set(x.o, x);
  }
  else if (typeof x === 'object' && x !== null) for (const v of Object.values(x)) refsOf(v, out);
  return out;
}

/**
 * The arrays of the part loaded at start that a count does not need, read on
 * first use instead (like the lazy part): the row-major facet codes and the
 * entities' orders (facets only), and range columns other than instanceCount
 * and series_size_MB (the totals of every count read those two). About 75 MB
 * of the full corpus's 130 that a server answering counts and pages never holds.
 */
function deferredOf(h: Header): Set<number> {
  const out = new Set<number>([h.codes.o]);
  for (const e of Object.values(h.entities)) if (e.order) out.add(e.order.o);
  for (const f of h.facet) if (f.kind === 'range' && f.values.o !== h.instances.o && f.values.o !== h.sizeMb.o) out.add(f.values.o);
  return out;
}

/**
 * Why a file is not used (absent, stale, damaged), or its header, the arrays
 * kept from the start (one buffer, packed; `at` maps a file offset to its
 * place there), and an open descriptor to read the others from later. Every
 * byte is checksummed: the kept ones where they land, the others through two
 * small buffers (one read while the other is checksummed).
 */
/** A part read on first use is not what was checksummed at load: the file changed under the server. */
export class IndexFileChanged extends IdqsError {
  /** The planner asks the next evaluator instead (see planner/plan.ts). */
  readonly askElsewhere = true;
  constructor(path: string) {
    super('unavailable', `The cohort index file ${path} changed while the server used it; the index is being rebuilt and answers come from SQL meanwhile. Retry.`);
  }
}

async function readHeader(path: string): Promise<{ header: Header; buf: ArrayBuffer; at: Map<number, number>; fd: number; partCrc: Map<number, number> } | { reason: string }> {
  if (!existsSync(path)) return { reason: 'absent' };
  const fd = fs.openSync(path, 'r');
  let keep = false;
  try {
    const { size } = fs.fstatSync(fd);
    if (size < PREFIX) return { reason: 'damaged (too short)' };
    const prefix = Buffer.alloc(PREFIX);
    await readAt(fd, prefix, 0, PREFIX, 0);
    if (!prefix.subarray(0, 8).equals(MAGIC)) return { reason: 'damaged (not a cohort index file)' };
    const length = prefix.readUInt32LE(8);
    if (PREFIX + length > size) return { reason: 'damaged (header past the end)' };
    const text = Buffer.alloc(length);
    await readAt(fd, text, 0, length, PREFIX);
    const header = JSON.parse(text.toString('utf8')) as Header;
    if (header.bytes !== size) return { reason: 'damaged (length mismatch)' };
    if (!(header.lazyFrom >= PREFIX + length && header.lazyFrom <= size)) return { reason: 'damaged (bad layout)' };
    const deferred = deferredOf(header);
    const kept = [...refsOf(header).values()].filter((r) => r.o < header.lazyFrom && !deferred.has(r.o)).sort((a, b) => a.o - b.o);
    const at = new Map<number, number>();
    let packed = 0;
    let end = PREFIX + length;
    for (const r of kept) {
      if (r.o < end || r.o % 8 !== 0 || r.o + bytesOf(r) > header.lazyFrom) return { reason: 'damaged (bad layout)' };
      at.set(r.o, packed);
      packed += Math.ceil(bytesOf(r) / 8) * 8;
      end = r.o + bytesOf(r);
    }
    // The parts not kept (read on first use), each with its own checksum, taken as the whole file's is.
    const later = [...refsOf(header).values()].filter((r) => !at.has(r.o) && bytesOf(r) > 0).sort((a, b) => a.o - b.o);
    const partCrc = new Map<number, number>(later.map((r) => [r.o, 0]));
    let next = 0;
    const partsOf = (bytes: Uint8Array, from: number) => {
      const to = from + bytes.length;
      while (next < later.length && later[next]!.o + bytesOf(later[next]!) <= from) next++;
      for (let i = next; i < later.length && later[i]!.o < to; i++) {
        const r = later[i]!;
        const a = Math.max(r.o, from);
        const b = Math.min(r.o + bytesOf(r), to);
        if (a < b) partCrc.set(r.o, crc32(bytes.subarray(a - from, b - from), partCrc.get(r.o)));
      }
    };
    const buf = new ArrayBuffer(packed);
    // The file from the header on as pieces: each kept array straight into its place, the rest through the scratch buffers.
    const pieces: { from: number; into: Uint8Array | null }[] = [];
    const gap = (from: number, to: number) => {
      for (let o = from; o < to; o += SCRATCH) pieces.push({ from: o, into: null });
      return to;
    };
    let pos = gap(PREFIX, PREFIX + length);
    for (const r of kept) {
      pos = gap(pos, r.o);
      const dest = new Uint8Array(buf, at.get(r.o)!, bytesOf(r));
      for (let k = 0; k < dest.length; k += READ_PIECE) pieces.push({ from: r.o + k, into: dest.subarray(k, Math.min(dest.length, k + READ_PIECE)) });
      pos = r.o + bytesOf(r);
    }
    gap(pos, size);
    const scratch = [Buffer.allocUnsafeSlow(SCRATCH), Buffer.allocUnsafeSlow(SCRATCH)];
    let crc = 0;
    let pending: Uint8Array | null = null;
    let pendingFrom = 0;
    const take = (bytes: Uint8Array, from: number) => {
      crc = crc32(bytes, crc);
      if (from >= PREFIX + length) partsOf(bytes, from);
    };
    for (let k = 0, s = 0; k < pieces.length; k++) {
      const p = pieces[k]!;
      const nextFrom = pieces[k + 1]?.from ?? size;
      const into = p.into ?? scratch[s++ % 2]!.subarray(0, Math.min(SCRATCH, nextFrom - p.from));
      const reading = readAt(fd, into, 0, into.length, p.from);
      if (pending) take(pending, pendingFrom);
      const { bytesRead } = await reading;
      if (bytesRead !== into.length) return { reason: 'damaged (shorter than it says)' };
      pending = into;
      pendingFrom = p.from;
    }
    if (pending) take(pending, pendingFrom);
    if (crc !== prefix.readUInt32LE(12)) return { reason: 'damaged (checksum mismatch)' };
    keep = true;
    return { header, buf, at, fd, partCrc };
  } catch (e) {
    return { reason: `damaged (${(e as Error).message})` };
  } finally {
    if (!keep) fs.closeSync(fd);
  }
}

/** The key of an existing file (its header only; no checksum), or null. */
async function keyOf(path: string): Promise<string | null> {
  if (!existsSync(path)) return null;
  const fh = await open(path, 'r');
  try {
    const prefix = Buffer.alloc(PREFIX);
    await fh.read(prefix, 0, PREFIX, 0);
    if (!prefix.subarray(0, 8).equals(MAGIC)) return null;
    const head = Buffer.alloc(Math.min(prefix.readUInt32LE(8), 1 << 26));
    await fh.read(head, 0, head.length, PREFIX);
    const m = /^\{"key":"([0-9a-f]+)"/.exec(head.toString('utf8', 0, 64));
    return m ? m[1]! : null;
  } catch {
    return null;
  } finally {
    await fh.close();
  }
}

export type LoadResult = { index: CohortIndex } | { reason: string };

/**
 * The index in `path` if it is this database's and whole: views over one
 * buffer read from the file, nothing computed from the engine's rows. Else
 * why not (the caller builds it instead).
 */
export async function readIndexFile(
  path: string,
  key: string,
  collections: (t: FacetTable) => Promise<void>,
  /** Called once when a part read on first use is not what was loaded (the file changed under the server). */
  changed: (reason: string) => void = () => {},
): Promise<LoadResult> {
  const r = await readHeader(path);
  if ('reason' in r) return r;
  const { header: h, buf, at, fd, partCrc } = r;
  let toldChanged = false;
  if (h.key !== key) {
    fs.closeSync(fd);
    return { reason: 'stale (written for another database or version)' };
  }
  const view = (ref: Ref): Typed => {
    const o = at.get(ref.o);
    if (o === undefined || bytesOf(ref) > buf.byteLength - o) throw new Error('an array not in the loaded part');
    return new ARRAYS[ref.t](buf, o, ref.n);
  };
  const as = <T extends Typed>(ref: Ref, type: new (...a: never[]) => T, v: Typed = view(ref)): T => {
    if (!(v instanceof type)) throw new Error(`cohort index file: an array of type ${ref.t} where another was expected`);
    return v;
  };
  // One holder of the descriptor for all lazy arrays: it is closed once none of them can be read any more.
  const source = { fd };
  /** A lazy or deferred array, read from the file (checksummed at load; the descriptor keeps that very file) on first use. */
  const later = (ref: Ref): Typed => {
    if (ref.o < PREFIX || ref.o + bytesOf(ref) > h.bytes) throw new Error('an array outside the file');
    const a = new ARRAYS[ref.t](ref.n);
    const bytes = new Uint8Array(a.buffer);
    for (let at = 0; at < bytes.length; ) {
      const n = fs.readSync(source.fd, bytes, at, bytes.length - at, ref.o + at);
      if (n === 0) break;
      at += n;
    }
    if (bytes.length === 0) return a;
    // Checked against the part's checksum taken at load: never an answer from bytes that changed since.
    const crc = partCrc.get(ref.o);
    if (crc === undefined || crc32(bytes) !== crc) {
      if (!toldChanged) {
        toldChanged = true;
        changed(`the part at byte ${ref.o} (${bytes.length} bytes) is not what was checksummed when the file was loaded`);
      }
      throw new IndexFileChanged(path);
    }
    return a;
  };
  /** A deferred array: read once, on first use (a facet, or a filter on that range). */
  const once = <T extends Typed>(ref: Ref, type: new (...a: never[]) => T): (() => T) => {
    let held: T | null = null;
    return () => (held ??= as(ref, type, later(ref)));
  };
  const deferred = deferredOf(h);
  const dict = (d: DictRef): SortedStrings => {
    let held: SortedStrings | null = null;
    const load = () =>
      (held ??= {
        bytes: Buffer.from(as(d.bytes, Uint8Array, later(d.bytes)).buffer),
        offsets: as(d.offsets, Uint32Array, later(d.offsets)),
        targets: as(d.targets, Int32Array, later(d.targets)),
      });
    const lazy = {
      get bytes() {
        return load().bytes;
      },
      get offsets() {
        return load().offsets;
      },
      get targets() {
        return load().targets;
      },
    };
    return lazy;
  };
  try {
    const columns = new Map<string, FacetColumn>();
    for (const e of h.facet) {
      const def = ATTRIBUTE_BY_NAME.get(e.name);
      if (!def) return { reason: `stale (attribute ${e.name} is no longer in the registry)` };
      if (e.kind === 'term') columns.set(e.name, { kind: 'term', def, slot: e.slot, values: e.values, codeOf: new Map(e.values.map((v, i) => [v, i + 1])) } satisfies TermColumn);
      else if (e.kind === 'range') {
        const column: RangeColumn = { kind: 'range', def, slot: e.slot, edges: e.edges, sorted: e.sorted, values: deferred.has(e.values.o) ? new Float64Array(0) : as(e.values, Float64Array) };
        if (deferred.has(e.values.o)) {
          const values = once(e.values, Float64Array);
          Object.defineProperty(column, 'values', { get: values, enumerable: true });
        }
        columns.set(e.name, column);
      }
      else columns.set(e.name, { kind: 'identifier', def });
    }
    const entity = (e: { ids: Ref | null; order: Ref | null }): Entity => {
      const out: Entity = { ids: e.ids ? as(e.ids, Int32Array) : null, order: null };
      if (e.order) Object.defineProperty(out, 'order', { get: once(e.order, Uint32Array), enumerable: true });
      return out;
    };
    if (h.codes.t !== 'u16' && h.codes.t !== 'u32') throw new Error('cohort index file: facet codes of a wrong type');
    const codes: () => Uint16Array | Uint32Array = h.codes.t === 'u16' ? once(h.codes, Uint16Array) : once(h.codes, Uint32Array);
    const table: FacetTable = {
      rows: h.rows,
      width: h.width,
      get codes() {
        return codes();
      },
      slotSizes: h.slotSizes,
      columns,
      entities: { patients: entity(h.entities.patients), studies: entity(h.entities.studies), series: entity(h.entities.series) },
      positionOf: as(h.positionOf, Int32Array),
    };
    await collections(table);
    const indexed = new Map<string, IndexedColumn>();
    for (const e of h.columns) {
      if (e.kind === 'number') {
        const c = columns.get(e.name);
        if (c?.kind !== 'range') throw new Error(`cohort index file: ${e.name} has no range column`);
        indexed.set(e.name, { kind: 'number', column: c });
      } else if (e.kind === 'rows') {
        indexed.set(e.name, { kind: 'rows', dict: dict(e.dict) });
      } else {
        const codes = view(e.codes);
        if (!(codes instanceof Uint16Array || codes instanceof Uint32Array || codes instanceof Int32Array)) throw new Error(`cohort index file: codes of ${e.name} of a wrong type`);
        const frequency = as(e.frequency, Int32Array);
        if (e.dict) {
          const d = dict(e.dict);
          indexed.set(e.name, {
            kind: 'coded',
            codes,
            frequency,
            values: null,
            dict: d,
            codeOf: (v) => {
              const i = findString(d, v);
              return i < 0 ? undefined : d.targets[i];
            },
          });
        } else {
          const c = columns.get(e.name);
          if (c?.kind !== 'term') throw new Error(`cohort index file: ${e.name} has no term column`);
          indexed.set(e.name, { kind: 'coded', codes, frequency, values: c.values, codeOf: (v) => c.codeOf.get(v) });
        }
      }
    }
    const index: CohortIndex = {
      table,
      rows: h.rows,
      columns: indexed,
      patients: as(h.patients, Int32Array),
      studies: as(h.studies, Int32Array),
      series: h.series ? as(h.series, Int32Array) : null,
      instances: as(h.instances, Float64Array),
      sizeMb: as(h.sizeMb, Float64Array),
      manifestOrder: h.manifestOrder ? as(h.manifestOrder, Uint32Array) : null,
      manifestRank: h.manifestRank ? as(h.manifestRank, Uint32Array) : null,
      rowidOf: as(h.rowidOf, Int32Array),
      adjacent: h.adjacent,
      all: h.all,
    };
    // The facet codes are always deferred: the descriptor stays open while the index lives.
    descriptors.register(source, fd);
    return { index };
  } catch (e) {
    fs.closeSync(fd);
    return { reason: `damaged (${(e as Error).message})` };
  }
}

/**
 * Writes the index beside the database unless a file with this key is already
 * there; under the cache lock, so concurrent starts write it once. Returns
 * whether it wrote, or why it could not (a folder not writable is not an
 * error: the index is then built at every start).
 */
export async function saveIndexFile(ix: CohortIndex, path: string, key: string): Promise<'written' | 'present' | string> {
  try {
    await access(dirname(path), constants.W_OK);
  } catch {
    return `the folder of ${path} is not writable`;
  }
  const present = async () => {
    if ((await keyOf(path)) !== key) return false;
    const r = await readHeader(path);
    if ('fd' in r) fs.closeSync(r.fd);
    return 'header' in r;
  };
  if (await present()) return 'present';
  return withCacheLock(path, 'writing the cohort index', async (held) => {
    removeDeadLeftovers(path, '.partial-');
    if (await present()) return 'present';
    await writeFileOf(ix, key, path, held.assertOwned);
    return 'written';
  });
}
