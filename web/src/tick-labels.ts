// Chart labels that fit the room a chart gives them without being cut
// mid-word: a label is broken into words (at spaces, and after "_", "-" and
// "/" so identifiers such as breast_cancer_screening_dbt break too), packed
// into at most a few lines of a width, and when it still does not fit the
// last line ends after a whole word with "…" (the chart's tooltip shows the
// full label).

export type Measure = (text: string) => number;

const ELLIPSIS = '…';

/** The words of a label, each keeping the separator that follows it ("breast_", "cancer"). */
export function words(label: string): string[] {
  return label.split(/(?<=[_\-/])|\s+/).filter((w) => w !== '');
}

/** Joins words back: a space between two words unless the first ends with a separator. */
function join(parts: string[]): string {
  return parts.reduce((s, w) => (s === '' ? w : /[_\-/]$/.test(s) ? s + w : `${s} ${w}`), '');
}

/**
 * The lines a label is drawn on: at most `maxLines`, each at most `width` wide by `measure`.
 * A word wider than the width on its own is shortened with "…" only when it is the label's
 * first word (nothing whole could be shown); otherwise the label stops before it.
 */
export function fitLabel(label: string, width: number, measure: Measure, maxLines = 2): string[] {
  if (measure(label) <= width) return [label];
  const ws = words(label);
  const lines: string[][] = [[]];
  let i = 0;
  for (; i < ws.length; i++) {
    const line = lines[lines.length - 1]!;
    if (measure(join([...line, ws[i]!])) <= width) {
      line.push(ws[i]!);
      continue;
    }
    if (line.length === 0) break; // a word wider than a whole line
    if (lines.length === maxLines) break;
    lines.push([]);
    i--; // place this word on the new line
  }
  const text = lines.map(join).filter((l) => l !== '');
  if (i >= ws.length) return text;
  // Some words did not fit: end the last line after a whole word with an ellipsis.
  for (let k = text.length - 1; k >= 0; k--) {
    const last = lines[k]!;
    while (last.length > 1 && measure(join(last) + ELLIPSIS) > width) last.pop();
    if (measure(join(last) + ELLIPSIS) <= width) return [...text.slice(0, k), join(last) + ELLIPSIS];
  }
  return [cutWord(ws[0]!, width, measure)];
}

/** The one case a cut is unavoidable: a single word wider than the room. */
function cutWord(word: string, width: number, measure: Measure): string {
  let n = word.length;
  while (n > 1 && measure(word.slice(0, n) + ELLIPSIS) > width) n--;
  return word.slice(0, n) + ELLIPSIS;
}

/** A canvas text measure for a CSS font, cached per text. */
export function canvasMeasure(font: string): Measure {
  const ctx = document.createElement('canvas').getContext('2d');
  const seen = new Map<string, number>();
  if (!ctx) return (t) => t.length * 7;
  ctx.font = font;
  return (t) => {
    let w = seen.get(t);
    if (w === undefined) {
      w = ctx.measureText(t).width;
      seen.set(t, w);
    }
    return w;
  };
}
