// "Did you mean" suggestions for names a caller got wrong, and the one way
// they are written in messages.

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** Up to `max` candidates closest to `name`: same name in another case first, then by edit distance. */
export function suggest(name: string, candidates: Iterable<string>, max = 3): string[] {
  const lower = name.toLowerCase();
  const scored: [string, number][] = [];
  for (const c of candidates) {
    const cl = c.toLowerCase();
    let score: number;
    if (cl === lower) score = 0;
    else if (cl.includes(lower) || lower.includes(cl)) score = 1 + Math.abs(cl.length - lower.length) / 100;
    else score = 2 + distance(lower, cl);
    if (score <= 2 + Math.max(2, Math.floor(name.length / 3))) scored.push([c, score]);
  }
  return scored
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, max)
    .map(([c]) => c);
}

/** " Did you mean 'a' or 'b'?" (with its leading space), or "" when there is nothing to suggest. */
export function suggestionText(values: readonly string[]): string {
  return values.length === 0 ? '' : ` Did you mean ${values.map((x) => `'${x}'`).join(' or ')}?`;
}
