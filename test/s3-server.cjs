// A real S3-compatible server (s3rver) on a loopback port, for the downloader's
// tests and benchmark. Run as its own process with --openssl-legacy-provider
// (s3rver's continuation tokens use DES, which OpenSSL 3 only has there).
// Input (env S3_SERVER_CONFIG, JSON): {directory, objects, buckets: {name: sourceFolderName}}:
// each bucket is seeded by hard-linking (or copying) the files of
// <objects>/<sourceFolderName>/ into s3rver's storage layout. Prints
// {"port": N} on stdout when listening; stops on SIGTERM.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const S3rver = require('s3rver');

const cfg = JSON.parse(process.env.S3_SERVER_CONFIG);

function seed(src, dst) {
  if (!fs.existsSync(src)) return;
  for (const e of fs.readdirSync(src, { withFileTypes: true })) {
    const s = path.join(src, e.name);
    if (e.isDirectory()) {
      fs.mkdirSync(path.join(dst, e.name), { recursive: true });
      seed(s, path.join(dst, e.name));
    } else {
      const d = path.join(dst, `${e.name}._S3rver_object`);
      try {
        fs.linkSync(s, d);
      } catch {
        fs.copyFileSync(s, d);
      }
    }
  }
}

fs.rmSync(cfg.directory, { recursive: true, force: true });
for (const [name, from] of Object.entries(cfg.buckets)) {
  fs.mkdirSync(path.join(cfg.directory, name), { recursive: true });
  seed(path.join(cfg.objects, from), path.join(cfg.directory, name));
}
const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  silent: true,
  directory: cfg.directory,
  configureBuckets: Object.keys(cfg.buckets).map((name) => ({ name })),
});
server.run().then(({ port }) => process.stdout.write(JSON.stringify({ port }) + '\n'));
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
