// Debian's nginx run as a child process with the shipped deploy/nginx/idqs.conf
// in front of replicas on loopback: its upstream ports, listen address and
// cache folder replaced, inside a minimal main configuration whose pid, logs
// and temp files live in one folder. Used by the fleet test and bench:fleet,
// so both exercise the configuration operators install.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The nginx binary, or null when the Debian package is not installed. */
export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p)) ?? null;

/** deploy/nginx/idqs.conf for these replica ports, listening on 127.0.0.1:`listen`, written into `dir`; returns the main configuration's path. */
export function writeNginxConfig(dir: string, ports: number[], listen: number): string {
  let site = readFileSync(join(root, 'deploy/nginx/idqs.conf'), 'utf8');
  const shipped = [...site.matchAll(/^\s*server 127\.0\.0\.1:(\d+) /gm)];
  if (shipped.length !== ports.length) throw new Error(`deploy/nginx/idqs.conf has ${shipped.length} replicas, not ${ports.length}`);
  shipped.forEach((m, i) => (site = site.replace(`127.0.0.1:${m[1]} `, `127.0.0.1:${ports[i]} `)));
  site = site.replace('listen 80;', `listen 127.0.0.1:${listen};`).replace('/var/cache/nginx/idqs', join(dir, 'cache'));
  writeFileSync(join(dir, 'idqs.conf'), site);
  const main = join(dir, 'nginx.conf');
  writeFileSync(
    main,
    `user root;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/idqs.conf;
}
`,
  );
  return main;
}

/** nginx in the foreground over `dir`'s configuration; resolves once it answers /v3/health through a replica. */
export async function startNginx(dir: string, ports: number[], listen: number): Promise<{ base: string; proc: ChildProcess }> {
  if (!NGINX) throw new Error('nginx is not installed (apt-get install nginx)');
  const conf = writeNginxConfig(dir, ports, listen);
  const proc = spawn(NGINX, ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const base = `http://127.0.0.1:${listen}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/v3/health`)).ok) return { base, proc };
    } catch {
      /* starting */
    }
    if (i > 150 || proc.exitCode !== null) {
      proc.kill('SIGKILL');
      throw new Error(`nginx did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
