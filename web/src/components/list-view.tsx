// The scaffolding of a searchable, sortable list of things (collections,
// analysis results): a heading, a search box, optional controls, a count of
// what is shown, and a table whose column headers sort. Each list says what
// its columns are; this draws them. A column may yield: on a narrow card
// the columns of lower priority leave first (styles.css, .yield), so the
// ones that stay fit the card and the action columns never leave it.

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { count as fmtCount } from '../format.ts';

export interface Column<T> {
  key: string;
  heading: string;
  num?: boolean;
  /** 1 (or absent): always shown; 2 to 4: hidden, highest first, as the card narrows. */
  priority?: 1 | 2 | 3 | 4;
  /** Absent: the column does not sort. */
  sortValue?: (row: T) => string | number;
  cell: (row: T) => ComponentChildren;
}

export interface ListViewProps<T> {
  /** data-view of the section, for tests and styles. */
  view: string;
  title: string;
  noun: string;
  rows: T[];
  rowKey: (row: T) => string;
  /** Attributes of each row, e.g. {'data-collection': id}. */
  rowAttrs?: (row: T) => Record<string, string>;
  /** Text searched by the search box. */
  searchText: (row: T) => (string | null)[];
  searchLabel: string;
  searchPlaceholder: string;
  columns: Column<T>[];
  initialSort: { key: string; desc: boolean };
  /** Controls beside the search box. */
  controls?: ComponentChildren;
  /** Rows left out before searching (e.g. not in the cohort). */
  keep?: (row: T) => boolean;
}

/** A cell's classes: numeric alignment and its priority (prio-2 to prio-4 yield). */
function cls<T>(c: Column<T>): string | undefined {
  const names = [c.num ? 'num' : '', c.priority && c.priority > 1 ? `prio-${c.priority}` : ''].filter((x) => x !== '');
  return names.length > 0 ? names.join(' ') : undefined;
}

export function ListView<T>(props: ListViewProps<T>) {
  const [query, setQuery] = useState('');
  const [sort, setSort] = useState(props.initialSort);
  const q = query.trim().toLowerCase();
  const col = props.columns.find((c) => c.key === sort.key && c.sortValue);
  const rows = props.rows
    .filter((r) => (props.keep ? props.keep(r) : true))
    .filter((r) => q === '' || props.searchText(r).some((x) => (x ?? '').toLowerCase().includes(q)))
    .sort((a, b) => {
      const x = col?.sortValue!(a) ?? 0;
      const y = col?.sortValue!(b) ?? 0;
      const d = x < y ? -1 : x > y ? 1 : 0;
      return (sort.desc ? -d : d) || props.rowKey(a).localeCompare(props.rowKey(b));
    });
  const id = `list-${props.view}`;
  return (
    <section data-view={props.view} aria-labelledby={id}>
      <h2 class="section-title" id={id}>
        {props.title}
      </h2>
      <div class="row">
        <input
          type="search"
          class="search grow"
          placeholder={props.searchPlaceholder}
          aria-label={props.searchLabel}
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        {props.controls}
        <span class="muted small" data-list-shown={rows.length}>
          {fmtCount(rows.length)} of {fmtCount(props.rows.length)} {props.noun}
        </span>
      </div>
      <div class="scroll-x yield">
        <table class="data">
          <thead>
            <tr>
              {props.columns.map((c) =>
                c.sortValue ? (
                  <th key={c.key} scope="col" class={cls(c)} aria-sort={sort.key === c.key ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
                    <button type="button" class="sort" data-sort={c.key} onClick={() => setSort((s) => ({ key: c.key, desc: s.key === c.key ? !s.desc : !!c.num }))}>
                      {c.heading}
                      <span aria-hidden="true" class="arrow">
                        {sort.key === c.key ? (sort.desc ? '▼' : '▲') : '↕'}
                      </span>
                    </button>
                  </th>
                ) : (
                  <th key={c.key} scope="col" class={cls(c)}>
                    {c.heading}
                  </th>
                ),
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={props.rowKey(r)} {...props.rowAttrs?.(r)}>
                {props.columns.map((c) => (
                  <td key={c.key} class={cls(c)}>
                    {c.cell(r)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
