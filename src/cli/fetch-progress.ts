// Progress of a release fetch: a bar (bytes, rate, ETA) on a terminal, plain
// lines otherwise (one per file, and a byte count every 10 s), warnings and
// retries always. Renders the events of core/release/fetch.ts.

import cliProgress from 'cli-progress';
import type { FetchEvent } from '../core/release/fetch.ts';

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

export function fetchReporter(stream: NodeJS.WriteStream = process.stderr): { onEvent: (e: FetchEvent) => void; stop: () => void } {
  const tty = Boolean(stream.isTTY);
  const lengths = new Map<string, number>();
  let total = 0;
  let done = 0;
  let started = Date.now();
  let lastLine = 0;
  let bar: cliProgress.SingleBar | null = null;
  const say = (line: string) => {
    if (bar) bar.stop();
    stream.write(`${line}\n`);
    if (bar) {
      bar = null;
      ensureBar();
    }
  };
  const ensureBar = () => {
    if (!tty || bar) return;
    bar = new cliProgress.SingleBar(
      { stream, format: 'fetch [{bar}] {percentage}% {got}/{all} {rate} ETA {eta_formatted}', hideCursor: true, clearOnComplete: true, etaBuffer: 50 },
      cliProgress.Presets.shades_classic,
    );
    bar.start(Math.max(total, 1), done, { got: mb(done), all: mb(total), rate: '' });
  };
  const update = () => {
    const secs = (Date.now() - started) / 1000;
    const rate = secs > 0 ? `${mb(done / secs)}/s` : '';
    if (bar) {
      bar.setTotal(Math.max(total, done, 1));
      bar.update(done, { got: mb(done), all: mb(total), rate });
    } else if (!tty && Date.now() - lastLine >= 10_000) {
      lastLine = Date.now();
      stream.write(`fetch: ${mb(done)} of ${total > 0 ? mb(total) : '?'} (${rate})\n`);
    }
  };
  const onEvent = (e: FetchEvent) => {
    switch (e.type) {
      case 'plan':
        started = Date.now();
        lastLine = Date.now();
        stream.write(`fetching release ${e.release} from ${e.source} into ${e.folder} (${e.files} file${e.files === 1 ? '' : 's'})\n`);
        ensureBar();
        break;
      case 'length':
        if (e.bytes !== null) {
          total += e.bytes - (lengths.get(e.file) ?? 0);
          lengths.set(e.file, e.bytes);
        }
        update();
        break;
      case 'bytes':
        done += e.delta;
        update();
        break;
      case 'file':
        if (e.status === 'downloaded') {
          if (!tty) stream.write(`fetch: ${e.file} ${mb(e.bytes)}${e.resumed ? ` (resumed at ${mb(e.resumed)})` : ''}\n`);
        } else if (e.status === 'reused') {
          if (!tty) stream.write(`fetch: ${e.file} unchanged, kept\n`);
        }
        break;
      case 'clinical':
        say(`fetching ${e.tables} clinical table${e.tables === 1 ? '' : 's'} (${e.files} object${e.files === 1 ? '' : 's'}) from ${e.prefix}`);
        ensureBar();
        break;
      case 'full':
        say(`fetching the full metadata (${e.tables.join(', ')}: ${e.files} object${e.files === 1 ? '' : 's'}, ${mb(e.bytes)}; ${mb(e.needed)} to download, ${mb(e.free)} free) from ${e.prefix}`);
        ensureBar();
        break;
      case 'unpack':
        say(`unpacking ${e.file}`);
        break;
      case 'retry':
        say(`retrying: ${e.message}`);
        break;
      case 'warning':
        say(`warning: ${e.message}`);
        break;
    }
  };
  return {
    onEvent,
    stop: () => {
      bar?.stop();
      bar = null;
    },
  };
}
