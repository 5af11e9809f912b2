// bin/idqs.cjs runs the compiled build only: in a copy of the launcher and
// the build script (a scratch project with its own src/ and dist/), a missing
// build and a build older than the sources are refused with what to run,
// while a fresh build, or sources only touched since it, run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { writeStamp } = createRequire(import.meta.url)('../scripts/build.cjs') as { writeStamp: (root: string) => void };

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'idqs-bin-'));
  for (const f of ['bin/idqs.cjs', 'scripts/build.cjs']) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    copyFileSync(join(root, f), join(dir, f));
  }
  mkdirSync(join(dir, 'src', 'core'), { recursive: true });
  writeFileSync(join(dir, 'src', 'core', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(dir, 'src', 'b.ts'), 'export const b = 2;\n');
  return dir;
}

/** Stand-in for the compiled CLI: says it ran. */
function compile(dir: string): void {
  mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
  writeFileSync(join(dir, 'dist', 'cli', 'main.js'), "process.stdout.write('ran ' + process.argv.slice(2).join(' '));\n");
  writeStamp(dir);
}

const run = (dir: string) => spawnSync(process.execPath, [join(dir, 'bin', 'idqs.cjs'), 'hello'], { encoding: 'utf8' });

test('no build: refused with the command that makes one', () => {
  const dir = project();
  try {
    const r = run(dir);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^idqs: idqs is not built: dist\/ has no compiled build\. Run "npm run build" in .* \(npm ci does it too\), then retry\.\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a fresh build runs; touched sources still run; changed, added or removed sources are named and refused', () => {
  const dir = project();
  try {
    compile(dir);
    assert.deepEqual([run(dir).status, run(dir).stdout], [0, 'ran hello']);

    const later = new Date(Date.now() + 5000);
    utimesSync(join(dir, 'src', 'b.ts'), later, later);
    assert.equal(run(dir).stdout, 'ran hello', 'a newer time alone is no change');

    writeFileSync(join(dir, 'src', 'core', 'a.ts'), 'export const a = 3;\n');
    writeFileSync(join(dir, 'src', 'c.ts'), 'export const c = 4;\n');
    rmSync(join(dir, 'src', 'b.ts'));
    const r = run(dir);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^idqs: the build in dist\/ is older than the sources \(changed since: src\/c\.ts, src\/core\/a\.ts, src\/b\.ts\)\. Run "npm run build"/);

    compile(dir);
    assert.equal(run(dir).stdout, 'ran hello');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
