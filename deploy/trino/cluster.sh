#!/usr/bin/env bash
# A local Trino cluster over a release folder's Parquet, for IDQS to hand heavy
# work to (and for its tests and benchmark): one coordinator and N workers on
# this host, a Hive catalog on a file metastore, and access control that lets
# queries only read that catalog (and the system catalog's runtime tables).
#
#   cluster.sh start --release-dir DIR --port P [--workers N] [--state DIR]
#   cluster.sh stop --port P [--state DIR]
#
# The server is fetched once with mvn into ~/.m2 and unpacked into
# ~/.cache/idqs-trino (never into the repository). Environment:
#   IDQS_TRINO_VERSION (476), IDQS_TRINO_HOME (~/.cache/idqs-trino),
#   IDQS_TRINO_HEAP_COORDINATOR (1G), IDQS_TRINO_HEAP_WORKER (1500M),
#   JAVA_HOME (a JDK >= 24; else the newest one found under /usr/lib/jvm).
set -euo pipefail

VERSION="${IDQS_TRINO_VERSION:-476}"
HOME_DIR="${IDQS_TRINO_HOME:-$HOME/.cache/idqs-trino}"
HEAP_COORD="${IDQS_TRINO_HEAP_COORDINATOR:-1G}"
HEAP_WORKER="${IDQS_TRINO_HEAP_WORKER:-1500M}"
CATALOG=idqs
SCHEMA=main
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() { echo "cluster.sh: $*" >&2; exit 1; }
usage() {
  sed -n '7,8p' "$0" | sed 's/^# *//' >&2
  exit 2
}

cmd="${1:-}"
[ -n "$cmd" ] || usage
shift
release_dir="" port="" workers=1 state=""
while [ $# -gt 0 ]; do
  case "$1" in
    --release-dir) release_dir="${2:?--release-dir needs a folder}"; shift 2 ;;
    --port) port="${2:?--port needs a number}"; shift 2 ;;
    --workers) workers="${2:?--workers needs a number}"; shift 2 ;;
    --state) state="${2:?--state needs a folder}"; shift 2 ;;
    -h|--help) usage ;;
    *) die "unknown option $1 (see cluster.sh --help)" ;;
  esac
done
[[ "$port" =~ ^[0-9]+$ ]] || die "--port P is required (the coordinator's HTTP port; workers take P+1..P+N)"
[[ "$workers" =~ ^[0-9]+$ ]] && [ "$workers" -le 8 ] || die "--workers must be a number from 0 to 8, got '$workers'"
state="${state:-$HOME_DIR/cluster-$port}"

# The java binary of a JDK >= 24: JAVA_HOME first, then the newest under /usr/lib/jvm.
find_java() {
  local candidates=() best="" best_major=0 j major
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME/bin/java")
  for j in /usr/lib/jvm/*/bin/java; do [ -x "$j" ] && candidates+=("$j"); done
  for j in "${candidates[@]}"; do
    [ -x "$j" ] || continue
    major=$("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p')
    if [ -n "$major" ] && [ "$major" -ge 24 ]; then
      if [ -n "${JAVA_HOME:-}" ] && [ "$j" = "$JAVA_HOME/bin/java" ]; then echo "$j"; return 0; fi
      if [ "$major" -gt "$best_major" ]; then best="$j" best_major="$major"; fi
    fi
  done
  [ -n "$best" ] && { echo "$best"; return 0; }
  return 1
}

# The unpacked server: fetched with mvn into ~/.m2 when the tarball is missing, unpacked once.
ensure_server() {
  local server="$HOME_DIR/trino-server-$VERSION"
  local tarball="$HOME/.m2/repository/io/trino/trino-server/$VERSION/trino-server-$VERSION.tar.gz"
  if [ ! -x "$server/bin/launcher" ]; then
    if [ ! -f "$tarball" ]; then
      command -v mvn > /dev/null || die "the Trino server is not cached and mvn is missing: install maven (apt-get install maven) or put $tarball in place"
      echo "fetching trino-server $VERSION with mvn (about 800 MB, once)" >&2
      mvn -q dependency:get -Dartifact="io.trino:trino-server:$VERSION:tar.gz" -Dtransitive=false >&2 || die "mvn could not fetch io.trino:trino-server:$VERSION:tar.gz"
    fi
    mkdir -p "$HOME_DIR"
    local tmp="$HOME_DIR/.unpack-$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    tar xzf "$tarball" -C "$tmp"
    rm -rf "$server"
    mv "$tmp/trino-server-$VERSION" "$server"
    rm -rf "$tmp"
  fi
  echo "$server"
}

# etc/ of one node: its configuration, the catalog and the access control.
write_node() {
  local name="$1" node_port="$2" heap="$3" coordinator="$4"
  local etc="$state/$name/etc"
  mkdir -p "$etc/catalog" "$state/$name/data"
  cat > "$etc/node.properties" << EOF
node.environment=idqs
node.id=$name-$port
node.data-dir=$state/$name/data
EOF
  cat > "$etc/jvm.config" << EOF
-server
-Xmx$heap
-XX:+UseG1GC
-XX:G1HeapRegionSize=32M
-XX:+ExplicitGCInvokesConcurrent
-XX:+ExitOnOutOfMemoryError
-XX:-OmitStackTraceInFastThrow
-XX:ReservedCodeCacheSize=256M
-XX:PerMethodRecompilationCutoff=10000
-XX:PerBytecodeRecompilationCutoff=10000
-Djdk.attach.allowAttachSelf=true
-Djdk.nio.maxCachedBufferSize=2000000
-XX:+EnableDynamicAgentLoading
-Dfile.encoding=UTF-8
EOF
  {
    echo "coordinator=$coordinator"
    echo "http-server.http.port=$node_port"
    echo "discovery.uri=http://127.0.0.1:$port"
    echo "catalog.config-dir=$etc/catalog"
    # Small per-query memory: this host also runs the service and its tests.
    echo "query.max-memory=1GB"
    echo "query.max-memory-per-node=400MB"
    echo "task.concurrency=2"
    # A worker that dies fails its queries within seconds (a clear error to retry), not after a minute.
    echo "query.remote-task.max-error-duration=10s"
    echo "exchange.max-error-duration=10s"
    if [ "$coordinator" = true ]; then
      echo "node-scheduler.include-coordinator=$([ "$workers" -eq 0 ] && echo true || echo false)"
      echo "query.min-expire-age=5m"
      # With no worker alive a query waits this long for one, then fails (a 503 to retry), not five minutes.
      echo "query-manager.required-workers-max-wait=10s"
    fi
  } > "$etc/config.properties"
  cat > "$etc/catalog/$CATALOG.properties" << EOF
connector.name=hive
hive.metastore=file
hive.metastore.catalog.dir=local:///metastore
fs.native-local.enabled=true
local.location=$state/fs
hive.timestamp-precision=MICROSECONDS
EOF
  if [ "$coordinator" = true ]; then
    cat > "$etc/access-control.properties" << EOF
access-control.name=file
security.config-file=$state/rules.json
security.refresh-period=1s
EOF
  fi
  echo 'io.trino=WARN' > "$etc/log.properties"
}

launch() {
  local name="$1"
  "$server/bin/launcher" start --etc-dir "$state/$name/etc" --data-dir "$state/$name/data" \
    --jvm-dir "$java_home" --pid-file "$state/$name/launcher.pid" > "$state/$name/launcher.out" 2>&1 ||
    die "$name did not start: $(tail -5 "$state/$name/launcher.out"; tail -5 "$state/$name/data/var/log/server.log" 2> /dev/null)"
}

stop_all() {
  local pidfile name pid
  [ -d "$state" ] || return 0
  for pidfile in "$state"/*/launcher.pid; do
    [ -f "$pidfile" ] || continue
    name="$(basename "$(dirname "$pidfile")")"
    pid="$(cat "$pidfile" 2> /dev/null || true)"
    [ -n "$pid" ] && kill "$pid" 2> /dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2> /dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2> /dev/null && kill -9 "$pid" 2> /dev/null || true
    rm -f "$pidfile"
    echo "stopped $name (pid $pid)" >&2
  done
}

case "$cmd" in
  stop)
    stop_all
    ;;
  start)
    [ -n "$release_dir" ] || die "--release-dir DIR is required: a folder of the release's Parquet files (idc_index.parquet, ...)"
    [ -f "$release_dir/idc_index.parquet" ] || die "$release_dir has no idc_index.parquet: not a release folder"
    release_dir="$(cd "$release_dir" && pwd)"
    java="$(find_java)" || die "Trino $VERSION needs Java 24 or newer: none found in JAVA_HOME or /usr/lib/jvm (install a Temurin 24+ JDK and set JAVA_HOME)"
    java_home="$(dirname "$(dirname "$java")")"
    server="$(ensure_server)"
    command -v node > /dev/null || die "node is needed to register the tables (the repository's Node)"
    stop_all
    rm -rf "$state"
    mkdir -p "$state/fs/metastore" "$state/fs/tables"
    setup_user="setup-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
    # While the tables are registered only the setup user may write; then the rules become read-only (refreshed each second).
    node "$HERE/setup.mjs" rules --catalog "$CATALOG" --setup-user "$setup_user" > "$state/rules.json"
    write_node coordinator "$port" "$HEAP_COORD" true
    for i in $(seq 1 "$workers"); do write_node "worker$i" "$((port + i))" "$HEAP_WORKER" false; done
    started=$(date +%s)
    launch coordinator
    for i in $(seq 1 "$workers"); do launch "worker$i"; done
    url="http://127.0.0.1:$port"
    node "$HERE/setup.mjs" ready --url "$url" --nodes "$((workers + 1))" --log "$state/coordinator/data/var/log/server.log" ||
      { stop_all; die "the cluster did not come up (logs under $state/*/data/var/log)"; }
    node "$HERE/setup.mjs" register --url "$url" --catalog "$CATALOG" --schema "$SCHEMA" --user "$setup_user" \
      --release-dir "$release_dir" --tables-dir "$state/fs/tables" || { stop_all; die "registering the tables failed"; }
    node "$HERE/setup.mjs" rules --catalog "$CATALOG" > "$state/rules.json.new" && mv "$state/rules.json.new" "$state/rules.json"
    node "$HERE/setup.mjs" locked --url "$url" --catalog "$CATALOG" --schema "$SCHEMA" --user "$setup_user" ||
      { stop_all; die "the read-only rules did not take effect"; }
    echo "trino: $workers worker(s), catalog $CATALOG, schema $SCHEMA, ready in $(($(date +%s) - started)) s" >&2
    echo "$url"
    ;;
  *)
    usage
    ;;
esac
