// Which slots of a row repeat the row walked just before it, per count mode.
// A facet pass walks the rows of each entity together; a series usually
// shares most of its codes (collection, manufacturer, study date, ...) with
// the previous series of the same patient, and after a row counted for every
// slot such a repeated code changes nothing: the entity is already counted
// for it. The pass then walks only the codes a row changes, about 4 of 16 on
// the real release. 2 bytes per row and count mode (4 over 16 slots), built
// on the first pass of the mode (about 100 ms for a million rows).

import type { CountMode, FacetTable } from './table.ts';

const built = new WeakMap<FacetTable, Map<CountMode, Uint16Array | Uint32Array | null>>();

/** The masks of the mode if they were built already (undefined: not yet; nothing is built here). */
export function builtRepeats(t: FacetTable, mode: CountMode): Uint16Array | Uint32Array | null | undefined {
  return built.get(t)?.get(mode);
}

/**
 * Per position i of the mode's walk order: bit s is set when the row at i
 * belongs to the same entity as the row at i - 1 and holds the same code in
 * slot s. Null when rows are their own entities (nothing repeats) or there
 * are more than 32 slots.
 */
export function repeatsOf(t: FacetTable, mode: CountMode): Uint16Array | Uint32Array | null {
  let byMode = built.get(t);
  if (!byMode) built.set(t, (byMode = new Map()));
  let out = byMode.get(mode);
  if (out !== undefined) return out;
  const { ids, order } = t.entities[mode];
  out = null;
  if (ids !== null && t.width <= 32) {
    const { rows, width, codes } = t;
    out = width <= 16 ? new Uint16Array(rows) : new Uint32Array(rows);
    for (let i = 1; i < rows; i++) {
      const r = order === null ? i : order[i]!;
      const p = order === null ? i - 1 : order[i - 1]!;
      if (ids[r] !== ids[p]) continue;
      let bits = 0;
      for (let s = 0; s < width; s++) if (codes[r * width + s] === codes[p * width + s]) bits |= 1 << s;
      out[i] = bits;
    }
  }
  byMode.set(mode, out);
  return out;
}
