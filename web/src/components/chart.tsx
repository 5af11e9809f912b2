// A Chart.js chart as a Preact component: bar (horizontal for categories,
// vertical for histograms) or pie, redrawn in place when its data changes.
// The canvas is labelled, and a visually hidden table carries the same
// numbers for screen readers. A chart that picks is operable from the
// keyboard: arrows move between bars or slices (shown with their tooltip),
// Enter or Space picks the one shown. Category labels wrap or end in "…"
// after a whole word to fit the room the chart gives them (tick-labels.ts);
// the tooltip shows them whole.

import { useEffect, useRef } from 'preact/hooks';
import { ArcElement, BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, PieController, Tooltip, type ChartConfiguration, type LegendItem, type Plugin } from 'chart.js';
import { canvasMeasure, fitLabel, type Measure } from '../tick-labels.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, PieController, ArcElement, Tooltip, Legend);
Chart.defaults.animation = false;
Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
Chart.defaults.color = '#3b4453';

export const PALETTE = ['#1f6feb', '#e36209', '#2da44e', '#8250df', '#cf222e', '#0a8a8a', '#bf8700', '#d63384', '#57606a', '#6e7bd9', '#a0a0a0'];

const FONT_SIZE = 12;
let measureOnce: Measure | null = null;
const measure: Measure = (t) => (measureOnce ??= canvasMeasure(`${FONT_SIZE}px ${Chart.defaults.font.family}`))(t);

/** Each draw leaves the category labels as drawn and the axis's right edge on the canvas (data-axis), for the layout test. */
const recordAxis: Plugin = {
  id: 'recordAxis',
  afterDraw(chart) {
    const y = chart.scales.y;
    if (chart.options.indexAxis !== 'y' || !y) return;
    const lines = y.ticks.map((t) => (Array.isArray(t.label) ? t.label : [String(t.label)]));
    chart.canvas.dataset.axis = JSON.stringify({ right: y.right, font: `${FONT_SIZE}px ${Chart.defaults.font.family}`, lines });
  },
};

/** A legend entry on one line: the label shortened after a whole word, its share ("(12%)") kept. */
function legendText(text: string, width: number): string {
  const share = / \([^()]*%\)$/.exec(text)?.[0] ?? '';
  const head = text.slice(0, text.length - share.length);
  return fitLabel(head, width - measure(share), measure, 1)[0]! + share;
}

export interface Series {
  label: string;
  values: number[];
  color: string | string[];
}

export interface ChartProps {
  kind: 'bar' | 'hbar' | 'pie';
  labels: string[];
  series: Series[];
  title: string;
  height?: number;
  /** Called with the index of the bar or slice clicked. */
  onPick?: (index: number) => void;
  /** A compact chart: no legend, fewer axis labels. */
  mini?: boolean;
}

export function ChartView(props: ChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  const pick = useRef(props.onPick);
  pick.current = props.onPick;

  useEffect(() => {
    const pie = props.kind === 'pie';
    // A pie's legend goes below it when the card is narrow, so its labels get the card's width.
    const wide = (canvas.current?.parentElement?.clientWidth ?? 0) >= 480;
    const config: ChartConfiguration = {
      type: pie ? 'pie' : 'bar',
      data: {
        labels: props.labels,
        datasets: props.series.map((s) => ({
          label: s.label,
          data: s.values,
          backgroundColor: s.color,
          borderWidth: pie ? 1 : 0,
          borderColor: '#fff',
          grouped: false,
          barPercentage: 0.9,
          categoryPercentage: 0.9,
          maxBarThickness: 32,
        })),
      },
      options: {
        maintainAspectRatio: false,
        responsive: true,
        indexAxis: props.kind === 'hbar' ? 'y' : 'x',
        plugins: {
          legend: {
            display: !props.mini && (pie || props.series.length > 1),
            position: pie && wide ? 'right' : pie ? 'bottom' : 'top',
            labels: {
              boxWidth: 12,
              generateLabels: (c: Chart): LegendItem[] =>
                Chart.overrides.pie.plugins.legend.labels
                  .generateLabels(c)
                  .map((item) => ({ ...item, text: legendText(item.text, (wide ? c.width / 2 : c.width) - 48) })),
            },
          },
          tooltip: { enabled: true },
        },
        scales: pie
          ? {}
          : {
              x: { grid: { display: props.kind !== 'bar' }, ticks: props.mini ? { maxRotation: 0, autoSkipPadding: 12, font: { size: 10 } } : {} },
              y: {
                grid: { display: props.kind === 'bar' },
                beginAtZero: true,
                ticks: props.mini
                  ? { maxTicksLimit: 3, font: { size: 10 } }
                  : props.kind === 'hbar'
                    ? {
                        autoSkip: false,
                        font: { size: FONT_SIZE },
                        // Chart.js gives a side axis at most half the chart's width.
                        callback(value) {
                          return fitLabel(this.getLabelForValue(Number(value)), this.chart.width / 2 - 14, measure);
                        },
                      }
                    : {},
              },
            },
        onClick: (_e, elements) => {
          const el = elements[0];
          if (el && pick.current) pick.current(el.index);
        },
        onHover: (e, elements) => {
          const target = e.native?.target as HTMLElement | undefined;
          if (target) target.style.cursor = elements.length > 0 && pick.current ? 'pointer' : 'default';
        },
      },
    };
    if (chart.current && (chart.current.config as { type?: string }).type === config.type && chart.current.options.indexAxis === config.options!.indexAxis) {
      chart.current.data = config.data;
      chart.current.update('none');
    } else {
      chart.current?.destroy();
      chart.current = new Chart(canvas.current!, { ...config, plugins: [recordAxis] });
    }
  }, [props.kind, props.mini, JSON.stringify(props.labels), JSON.stringify(props.series)]);

  useEffect(() => () => chart.current?.destroy(), []);

  const at = useRef(-1);
  const show = (i: number) => {
    const c = chart.current;
    if (!c) return;
    at.current = i;
    const active = props.series.map((_, d) => ({ datasetIndex: d, index: i }));
    c.setActiveElements(active);
    c.tooltip?.setActiveElements(active, { x: 0, y: 0 });
    c.update('none');
  };
  const onKey = (e: KeyboardEvent) => {
    const n = props.labels.length;
    if (n === 0) return;
    const step = e.key === 'ArrowRight' || e.key === 'ArrowDown' ? 1 : e.key === 'ArrowLeft' || e.key === 'ArrowUp' ? -1 : 0;
    if (step !== 0) {
      e.preventDefault();
      show(at.current < 0 ? (step > 0 ? 0 : n - 1) : (at.current + step + n) % n);
    } else if ((e.key === 'Enter' || e.key === ' ') && at.current >= 0) {
      e.preventDefault();
      pick.current?.(at.current);
    }
  };
  const clear = () => {
    at.current = -1;
    chart.current?.setActiveElements([]);
    chart.current?.tooltip?.setActiveElements([], { x: 0, y: 0 });
    chart.current?.update('none');
  };
  const keys = props.onPick !== undefined;

  return (
    <div class="chart" style={{ height: `${props.height ?? 220}px` }}>
      <canvas
        ref={canvas}
        role="img"
        aria-label={keys ? `${props.title}. Arrow keys move between values, Enter selects.` : props.title}
        tabIndex={keys ? 0 : undefined}
        onKeyDown={keys ? onKey : undefined}
        onBlur={keys ? clear : undefined}
      />
      <div class="offscreen">
      <table>
        <caption>{props.title}</caption>
        <tbody>
          {props.labels.map((l, i) => (
            <tr key={l}>
              <th scope="row">{l}</th>
              {props.series.map((s) => (
                <td key={s.label}>{s.values[i]}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      </div>
    </div>
  );
}
