#!/usr/bin/env node
// Entry point for the `idqs` command. The DuckDB bindings run queries on libuv's
// thread pool; the default of 4 threads would let four slow caller queries block
// every curated query, so widen it before anything touches the pool.
process.env.UV_THREADPOOL_SIZE ??= '16';
const { register } = await import('tsx/esm/api');
register();
await import('../src/cli/main.ts');
