// How the downloader talks to its user: a progress bar on a terminal
// (cli-progress: bytes and files, rate, ETA), periodic lines in logs, nothing
// but failures in --quiet mode, and JSON lines on stdout with --json.

import cliProgress from 'cli-progress';

export type Mode = 'tty' | 'plain' | 'quiet' | 'json';

export interface FileEvent {
  status: 'downloaded' | 'skipped' | 'failed';
  url: string;
  path: string | null;
  bytes: number;
  error?: string;
}

export interface Summary {
  series: number;
  files: number;
  downloaded: number;
  skipped: number;
  failed: number;
  /** Bytes written in this run. */
  bytes: number;
  /** Bytes of every listed object (downloaded, skipped or failed). */
  total_bytes: number;
  seconds: number;
  interrupted: boolean;
  dry_run: boolean;
  out: string;
}

/** Decimal units, as the index and the API count sizes. */
export function humanBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)} ${units[i]}`;
}

function duration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export class Reporter {
  private bar: cliProgress.MultiBar | null = null;
  private barItem: cliProgress.SingleBar | null = null;
  private totalFiles = 0;
  private totalBytes = 0;
  private estimatedBytes = 0;
  private listedBytes = 0;
  private bytes = 0;
  private files = 0;
  private started = 0;
  private lastTick = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly mode: Mode,
    private readonly out: NodeJS.WritableStream = process.stdout,
    private readonly err: NodeJS.WritableStream = process.stderr,
  ) {}

  private json(obj: Record<string, unknown>): void {
    this.out.write(JSON.stringify(obj) + '\n');
  }

  private line(msg: string): void {
    if (this.bar) this.bar.log(msg + '\n');
    else this.err.write(msg + '\n');
  }

  /** Information for a person (suppressed in quiet and JSON modes). */
  info(msg: string): void {
    if (this.mode === 'tty' || this.mode === 'plain') this.line(msg);
  }

  /** Something the user should know even in quiet mode (a JSON event in JSON mode). */
  warn(msg: string): void {
    if (this.mode === 'json') this.json({ event: 'warning', message: msg });
    else this.line(`warning: ${msg}`);
  }

  /** A machine-readable event (JSON mode only). */
  event(name: string, data: Record<string, unknown>): void {
    if (this.mode === 'json') this.json({ event: name, ...data });
  }

  /**
   * Transfers begin while the listing goes on: the totals grow as series are
   * listed (planned), and the bytes' total is the index's size until the
   * listing passes it.
   */
  start(estimatedBytes: number): void {
    this.totalFiles = 0;
    this.estimatedBytes = estimatedBytes;
    this.totalBytes = estimatedBytes;
    this.started = Date.now();
    if (this.mode === 'json') this.json({ event: 'start', files: null, bytes: estimatedBytes || null });
    if (this.mode === 'tty') {
      this.bar = new cliProgress.MultiBar(
        {
          format: ' {bar} {percentage}% | {done}/{size} | {files}/{totalFiles} files | {rate} | ETA {eta_formatted}',
          stream: this.err as NodeJS.WriteStream,
          hideCursor: true,
          clearOnComplete: false,
          stopOnComplete: false,
          etaBuffer: 40,
          fps: 5,
          autopadding: true,
        },
        cliProgress.Presets.shades_classic,
      );
      this.barItem = this.bar.create(Math.max(1, estimatedBytes), 0, this.payload());
    } else if (this.mode === 'plain' || this.mode === 'json') {
      this.timer = setInterval(() => this.tick(), this.mode === 'json' ? 1000 : 10_000);
      this.timer.unref();
    }
  }

  private rate(): number {
    const s = (Date.now() - this.started) / 1000;
    return s > 0 ? this.bytes / s : 0;
  }

  private payload() {
    return {
      done: humanBytes(this.bytes),
      size: humanBytes(this.totalBytes),
      files: this.files,
      totalFiles: this.totalFiles,
      rate: `${humanBytes(this.rate())}/s`,
    };
  }

  private tick(): void {
    const rate = this.rate();
    const eta = rate > 0 ? (this.totalBytes - this.bytes) / rate : Infinity;
    if (this.mode === 'json') {
      this.json({ event: 'progress', bytes: this.bytes, total_bytes: this.totalBytes, files: this.files, total_files: this.totalFiles, bytes_per_second: Math.round(rate), eta_seconds: Number.isFinite(eta) ? Math.round(eta) : null });
    } else if (this.mode === 'plain') {
      this.err.write(`${humanBytes(this.bytes)}/${humanBytes(this.totalBytes)}, ${this.files}/${this.totalFiles} files, ${humanBytes(rate)}/s, ETA ${duration(eta)}\n`);
    }
  }

  /** Files listed and queued for transfer. */
  planned(files: number, bytes: number): void {
    this.totalFiles += files;
    this.listedBytes += bytes;
    const total = Math.max(this.estimatedBytes, this.listedBytes);
    if (total !== this.totalBytes) {
      this.totalBytes = total;
      this.barItem?.setTotal(Math.max(1, total));
    }
  }

  /** Bytes received (negative when a failed attempt's bytes are taken back). */
  progress(delta: number): void {
    this.bytes += delta;
    if (this.barItem) {
      const now = Date.now();
      if (now - this.lastTick >= 100) {
        this.lastTick = now;
        this.barItem.update(this.bytes, this.payload());
      }
    }
  }

  file(ev: FileEvent): void {
    this.files++;
    if (ev.status === 'skipped') this.progress(ev.bytes);
    if (this.mode === 'json') this.json({ event: 'file', ...ev });
    else if (ev.status === 'failed') this.line(`failed: ${ev.url}${ev.path ? ` -> ${ev.path}` : ''}: ${ev.error}`);
    this.barItem?.update(this.bytes, this.payload());
  }

  end(s: Summary): void {
    if (this.timer) clearInterval(this.timer);
    if (this.bar) {
      this.barItem?.update(this.bytes, this.payload());
      this.bar.stop();
      this.bar = null;
    }
    if (this.mode === 'json') {
      this.json({ event: 'summary', ...s });
      return;
    }
    const rate = s.seconds > 0 ? s.bytes / s.seconds : 0;
    const head = s.dry_run ? 'dry run' : s.interrupted ? 'interrupted' : s.failed > 0 ? 'finished with failures' : 'done';
    // A dry run's summary is its plan: the files and bytes it would download, and what could not be listed.
    const text = s.dry_run
      ? `${head}: would download ${s.files} files (${humanBytes(s.total_bytes)}) in ${s.series} series, ${s.failed} failed to list, in ${duration(s.seconds)}; nothing downloaded`
      :
      `${head}: ${s.files} files (${humanBytes(s.total_bytes)}) in ${s.series} series: ${s.downloaded} downloaded (${humanBytes(s.bytes)}, ${humanBytes(rate)}/s), ` +
      `${s.skipped} already complete, ${s.failed} failed, in ${duration(s.seconds)}${s.dry_run ? '; nothing downloaded' : ` -> ${s.out}`}`;
    if (this.mode !== 'quiet' || s.failed > 0 || s.interrupted) this.err.write(text + '\n');
  }
}
