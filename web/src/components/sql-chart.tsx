// A chart of a SQL result: bar, line or scatter, with the columns on each
// axis chosen from the result (numbers up; categories or numbers along).
// What is drawn is also in a visually hidden table, and on the canvas as
// data-points (for the browser test); rows that cannot be drawn are counted.

import { useEffect, useRef, useState } from 'preact/hooks';
import { Chart, LinearScale, CategoryScale, BarController, BarElement, LineController, LineElement, PointElement, ScatterController, Tooltip, type ChartConfiguration } from 'chart.js';
import type { SqlResult } from '../api.ts';
import { count } from '../format.ts';
import { PALETTE } from './chart.tsx';
import { defaultAxes, MAX_BARS, numericColumns, pointsOf, type SqlChartKind } from '../sql-points.ts';

Chart.register(LinearScale, CategoryScale, BarController, BarElement, LineController, LineElement, PointElement, ScatterController, Tooltip);

export function SqlChart(props: { result: SqlResult }) {
  const r = props.result;
  const nums = numericColumns(r);
  const first = defaultAxes(r);
  const [kind, setKind] = useState<SqlChartKind>(first?.kind ?? 'bar');
  const [x, setX] = useState(first?.x ?? r.columns[0] ?? '');
  const [y, setY] = useState(first?.y ?? nums[0] ?? '');
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  // A new result with other columns starts from its own first choice.
  const shape = JSON.stringify([r.columns, r.types]);
  useEffect(() => {
    const d = defaultAxes(r);
    if (d) {
      setKind(d.kind);
      setX(d.x);
      setY(d.y);
    }
  }, [shape]);

  const usable = nums.length > 0 && r.columns.includes(x) && nums.includes(y) && (kind !== 'scatter' || nums.includes(x));
  const p = usable ? pointsOf(r, kind, x, y) : null;

  useEffect(() => {
    chart.current?.destroy();
    chart.current = null;
    if (!p || !canvas.current) return;
    const scatter = kind === 'scatter';
    const config: ChartConfiguration = {
      type: kind,
      data: scatter
        ? { datasets: [{ label: y, data: p.xy, backgroundColor: PALETTE[0], pointRadius: 3 }] }
        : { labels: p.labels, datasets: [{ label: y, data: p.values, backgroundColor: PALETTE[0], borderColor: PALETTE[0], maxBarThickness: 32 }] },
      options: {
        animation: false,
        maintainAspectRatio: false,
        responsive: true,
        plugins: { legend: { display: false }, tooltip: { enabled: true } },
        scales: {
          x: { type: scatter ? 'linear' : 'category', title: { display: true, text: x } },
          y: { type: 'linear', beginAtZero: kind === 'bar', title: { display: true, text: y } },
        },
      },
    };
    chart.current = new Chart(canvas.current, config);
    canvas.current.dataset.points = JSON.stringify(scatter ? p.xy : p.labels.map((l, i) => [l, p.values[i]]));
    return () => {
      chart.current?.destroy();
      chart.current = null;
    };
  }, [kind, x, y, JSON.stringify(p)]);

  if (nums.length === 0) return <p class="muted small">No numeric column in this result to chart.</p>;
  const title = `${kind} chart of ${y} by ${x}`;
  return (
    <section class="card sql-chart" aria-label="Chart of the result">
      <div class="row">
        <label>
          Chart{' '}
          <select name="chart-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as SqlChartKind)}>
            <option value="bar">bar</option>
            <option value="line">line</option>
            <option value="scatter">scatter</option>
          </select>
        </label>
        <label>
          Along{' '}
          <select name="chart-x" value={x} onChange={(e) => setX(e.currentTarget.value)}>
            {(kind === 'scatter' ? nums : r.columns).map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          Up{' '}
          <select name="chart-y" value={y} onChange={(e) => setY(e.currentTarget.value)}>
            {nums.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
      </div>
      {!usable ? <p class="muted small">A scatter chart needs a numeric column along too: pick one.</p> : null}
      {p && p.skipped > 0 ? (
        <p class="muted small" data-chart-skipped={p.skipped}>
          {count(p.skipped)} row{p.skipped === 1 ? '' : 's'} not drawn: {kind === 'bar' ? `a bar chart draws the first ${MAX_BARS} rows with a number, ` : ''}rows without a number are left out.
        </p>
      ) : null}
      <div class="chart" style={{ height: '280px' }}>
        <canvas ref={canvas} role="img" aria-label={title} />
        {p ? (
          <div class="offscreen">
            <table>
              <caption>{title}</caption>
              <tbody>
                {kind === 'scatter'
                  ? p.xy.map((q, i) => (
                      <tr key={i}>
                        <td>{q.x}</td>
                        <td>{q.y}</td>
                      </tr>
                    ))
                  : p.labels.map((l, i) => (
                      <tr key={i}>
                        <th scope="row">{l}</th>
                        <td>{p.values[i]}</td>
                      </tr>
                    ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </div>
    </section>
  );
}
