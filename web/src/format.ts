// Numbers and sizes for people: thousands separators, decimal size units (the
// index stores megabytes, 1 TB = 1e6 MB), short labels for chart axes, and
// files offered for download.

const integer = new Intl.NumberFormat('en-US');

/** The text with its first letter capitalised: a count mode as a heading ("patients" -> "Patients"). */
export const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

export function count(n: number): string {
  return integer.format(n);
}

/** A count with its noun, singular for one: "1 item", "2 items" (`many` when the plural is not the noun + s). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** A size given in decimal megabytes, in the largest unit that keeps it at or above 1. */
export function size(mb: number): string {
  const units: [string, number][] = [
    ['PB', 1e9],
    ['TB', 1e6],
    ['GB', 1e3],
    ['MB', 1],
    ['KB', 1e-3],
  ];
  for (const [unit, f] of units) {
    if (mb >= f) {
      const v = mb / f;
      return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${unit}`;
    }
  }
  return mb === 0 ? '0 B' : `${Math.round(mb * 1e6)} B`;
}

export function percent(part: number, whole: number): string {
  if (whole === 0) return '0%';
  const p = (100 * part) / whole;
  return p >= 10 || p === 0 ? `${p.toFixed(0)}%` : p < 0.1 ? '<0.1%' : `${p.toFixed(1)}%`;
}

/** A label for a bin or a value on a chart axis. */
export function short(v: string | number, max = 28): string {
  const s = typeof v === 'number' ? (Number.isInteger(v) ? integer.format(v) : String(Number(v.toPrecision(4)))) : v;
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Offer text as a file download. */
export function saveText(name: string, text: string, type = 'text/plain'): void {
  saveParts(name, [text], type);
}

/** Save text given in parts (a Blob of them: the parts are never joined into one string). */
export function saveParts(name: string, parts: string[], type = 'text/plain'): void {
  const url = URL.createObjectURL(new Blob(parts, { type: `${type};charset=utf-8` }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A timestamp for file names: 20250113_154500. */
export function stamp(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}_${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** CSV of rows, RFC 4180 quoting; lists and objects as JSON. */
export function csv(columns: string[], rows: Record<string, unknown>[]): string {
  const esc = (v: unknown) => {
    const s = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return [columns.map(esc).join(','), ...rows.map((r) => columns.map((c) => esc(r[c])).join(','))].join('\r\n') + '\r\n';
}
