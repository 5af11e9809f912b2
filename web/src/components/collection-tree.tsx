// The portal's program → collection tree: collections grouped under their
// program (collections_index.program_id), each program with its count and a
// checkbox that selects or clears all its collections, open on demand.

import { useEffect, useState } from 'preact/hooks';
import { allCollections, type TermFacet } from '../api.ts';
import { count as fmtCount } from '../format.ts';

interface Props {
  facet: TermFacet;
  /** The program_id facet, for the programs' own counts (distinct entities, not sums). */
  programs: TermFacet | undefined;
  selected: Set<string>;
  hideZero: boolean;
  query: string;
  onSelect: (values: string[]) => void;
}

export function CollectionTree(props: Props) {
  const [programOf, setProgramOf] = useState<Map<string, string> | null>(null);
  const [open, setOpen] = useState<Set<string>>(new Set());
  useEffect(() => {
    allCollections()
      .then((cs) => setProgramOf(new Map(cs.map((c) => [c.collection_id, c.program_id ?? '(no program)']))))
      .catch(() => setProgramOf(new Map()));
  }, []);
  if (!programOf) return <div class="muted small">Loading programs…</div>;
  const q = props.query.trim().toLowerCase();
  const groups = new Map<string, TermFacet['values']>();
  for (const v of props.facet.values) {
    if (props.hideZero && v.count === 0 && !props.selected.has(v.value)) continue;
    const p = programOf.get(v.value) ?? '(no program)';
    if (q !== '' && !v.value.toLowerCase().includes(q) && !p.toLowerCase().includes(q)) continue;
    groups.set(p, [...(groups.get(p) ?? []), v]);
  }
  const programCount = new Map((props.programs?.values ?? []).map((v) => [v.value, v.count]));
  const order = [...groups.keys()].sort((a, b) => (programCount.get(b) ?? 0) - (programCount.get(a) ?? 0) || a.localeCompare(b));
  const toggle = (p: string) => setOpen((o) => new Set(o.has(p) ? [...o].filter((x) => x !== p) : [...o, p]));
  return (
    <ul class="values tree" data-tree="program">
      {order.map((p) => {
        const members = groups.get(p)!;
        const picked = members.filter((v) => props.selected.has(v.value)).length;
        const expanded = open.has(p) || q !== '' || picked > 0;
        const ids = members.map((v) => v.value);
        return (
          <li key={p} data-program={p}>
            <div class="tree-head">
              <button type="button" class="chev-btn" aria-expanded={expanded} aria-label={`${expanded ? 'Hide' : 'Show'} the collections of ${p}`} onClick={() => toggle(p)}>
                {expanded ? '▾' : '▸'}
              </button>
              <label>
                <input
                  type="checkbox"
                  checked={picked > 0 && picked === members.length}
                  ref={(el) => {
                    if (el) el.indeterminate = picked > 0 && picked < members.length;
                  }}
                  onChange={(e) =>
                    props.onSelect(e.currentTarget.checked ? [...new Set([...props.selected, ...ids])] : [...props.selected].filter((x) => !ids.includes(x)))
                  }
                />
                <span class="value">{p}</span>
                <span class="count" data-program-count={programCount.get(p) ?? 0}>
                  {programCount.has(p) ? fmtCount(programCount.get(p)!) : ''}
                </span>
              </label>
            </div>
            {expanded ? (
              <ul class="values nested">
                {members.map((v) => (
                  <li key={v.value} class={v.count === 0 ? 'zero' : undefined}>
                    <label>
                      <input
                        type="checkbox"
                        checked={props.selected.has(v.value)}
                        onChange={(e) => props.onSelect(e.currentTarget.checked ? [...props.selected, v.value] : [...props.selected].filter((x) => x !== v.value))}
                      />
                      <span class="value" title={v.value}>
                        {v.value}
                      </span>
                      <span class="count" data-count={v.count} data-value={v.value}>
                        {fmtCount(v.count)}
                      </span>
                    </label>
                  </li>
                ))}
              </ul>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}
