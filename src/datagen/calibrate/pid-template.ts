// PatientID templates: the shape of a collection's real PatientIDs, position
// by position (a constant character stays literal, a varying one becomes the
// smallest character class that covers it), so generated identifiers look
// like the collection's without copying any.

import { PID_CLASSES } from '../profile.ts';

const CLASS_ORDER = ['#', '@', '&', '%', '$', '*', '?'] as const;

function classOf(chars: Set<string>): string {
  for (const c of CLASS_ORDER) {
    const alphabet = PID_CLASSES[c]!;
    if ([...chars].every((x) => alphabet.includes(x))) return c;
  }
  return '?';
}

/** Template of a set of PatientIDs (those of the most common length). */
export function pidTemplate(ids: string[]): string {
  if (ids.length === 0) return 'P-#####';
  const byLen = new Map<number, string[]>();
  for (const id of ids) byLen.set(id.length, [...(byLen.get(id.length) ?? []), id]);
  const [len, same] = [...byLen.entries()].sort((a, b) => b[1].length - a[1].length || a[0] - b[0])[0]!;
  let out = '';
  for (let i = 0; i < len; i++) {
    const chars = new Set(same.map((s) => s[i]!));
    const only = [...chars][0]!;
    if (chars.size === 1 && !(only in PID_CLASSES)) out += only;
    else out += classOf(chars);
  }
  // A single patient shows no variation: make its digits variable.
  if (same.length === 1) out = out.replace(/[0-9]/g, '#');
  return out;
}
