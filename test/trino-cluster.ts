// A real Trino cluster for the tests and the benchmark, started with the
// script operators use (deploy/trino/cluster.sh: it fetches the server with mvn
// when the cache lacks it) over a release folder's Parquet, on a port of its own.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const script = fileURLToPath(new URL('../deploy/trino/cluster.sh', import.meta.url));

export interface TrinoCluster {
  url: string;
  port: number;
  /** Seconds from start to a cluster that answers. */
  startS: number;
  stop: () => Promise<void>;
}

export async function startTrinoCluster(releaseDir: string, port: number, workers = 1): Promise<TrinoCluster> {
  const t0 = Date.now();
  const stop = async () => void (await run('bash', [script, 'stop', '--port', String(port)], { timeout: 60_000 }));
  try {
    const { stdout } = await run('bash', [script, 'start', '--release-dir', releaseDir, '--port', String(port), '--workers', String(workers)], {
      timeout: 900_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const url = stdout.trim().split('\n').at(-1)!;
    if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) throw new Error(`cluster.sh printed no URL: ${stdout}`);
    return { url, port, startS: (Date.now() - t0) / 1000, stop };
  } catch (e) {
    await stop().catch(() => undefined);
    const err = e as { stderr?: string; message: string };
    throw new Error(`cluster.sh start failed: ${err.message}\n${err.stderr ?? ''}`, { cause: e });
  }
}
