// Minimal types for the parts of autocannon the benchmark uses.
declare module 'autocannon' {
  interface Histogram {
    p50: number;
    p90: number;
    p99: number;
    average: number;
  }
  interface Result {
    latency: Histogram;
    requests: Histogram & { total: number };
    errors: number;
    non2xx: number;
  }
  interface Options {
    url: string;
    method?: string;
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
    body?: string;
    /** Requests sent in turn; setupRequest, when given, rebuilds one before every send. */
    requests?: { method?: string; path?: string; body?: string; setupRequest?: (req: Record<string, unknown>) => Record<string, unknown> }[];
  }
  /** The run: a promise of its result that also reports every response (status, bytes, milliseconds with fractions). */
  interface Instance extends Promise<Result> {
    on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): this;
  }
  function autocannon(opts: Options): Instance;
  export default autocannon;
}
