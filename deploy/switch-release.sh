#!/usr/bin/env bash
# Switch every replica of this host to another data release with no failed
# request: build the new database aside first (the replicas keep serving the
# old file meanwhile), point the shared environment file at it, then restart
# the replicas one at a time, each time waiting for the new one's /v3/ready
# before touching the next. nginx sends the requests of a restarting replica
# to the others (proxy_next_upstream), so clients see no error; a /v2 manifest
# being paged across the switch gets a clear "another data release" error for
# its next page and starts again, never a page of the other release.
#
# usage: switch-release.sh IDQS_RELEASE=25.0.5 [PORT ...]
#        switch-release.sh IDQS_DB=/var/lib/idqs/v26.duckdb [PORT ...]
# env:   IDQS_ENV_FILE       the replicas' environment file (/etc/idqs/idqs.env)
#        IDQS_CMD            the idqs command that builds the release (idqs)
#        IDQS_RESTART_CMD    restarts one replica, {port} replaced
#                            (systemctl restart idqs@{port}); must return once the old process has exited
#        IDQS_READY_TIMEOUT_S  longest wait for one replica's /v3/ready (300)
#        IDQS_SETTLE_S       wait after a replica is ready before the next restart (3): longer
#                            than nginx's fail_timeout, so nginx has it back in rotation first
set -euo pipefail

env_file=${IDQS_ENV_FILE:-/etc/idqs/idqs.env}
idqs_cmd=${IDQS_CMD:-idqs}
restart_cmd=${IDQS_RESTART_CMD:-systemctl restart idqs@\{port\}}
ready_timeout=${IDQS_READY_TIMEOUT_S:-300}
settle_s=${IDQS_SETTLE_S:-3}

die() { echo "switch-release: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "say what to serve: IDQS_RELEASE=25.0.5 or IDQS_DB=/path/to/db.duckdb (then the replicas' ports, default 8001 8002 8003)"
target=$1; shift
ports=("$@"); [ ${#ports[@]} -gt 0 ] || ports=(8001 8002 8003)
case $target in
  IDQS_RELEASE=?*|IDQS_DB=?*) ;;
  *) die "'$target' is neither IDQS_RELEASE=<version> nor IDQS_DB=<file>" ;;
esac
name=${target%%=*}; value=${target#*=}
[ -r "$env_file" ] || die "cannot read the replicas' environment file $env_file (set IDQS_ENV_FILE)"
for p in "${ports[@]}"; do [[ $p =~ ^[0-9]+$ ]] || die "'$p' is not a port"; done
[[ $settle_s =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "IDQS_SETTLE_S='$settle_s' is not a number of seconds"

# 1. Build aside, with the replicas' own settings (same cache folder).
if [ "$name" = IDQS_RELEASE ]; then
  echo "building release $value aside (the replicas keep serving meanwhile) ..."
  (set -a; . "$env_file"; set +a; unset IDQS_DB IDQS_RELEASE; $idqs_cmd data fetch --release "$value" --source "${IDQS_RELEASE_SOURCE:-gcs}") \
    || die "could not fetch and build release $value; nothing was changed"
else
  [ -r "$value" ] || die "cannot read database $value; nothing was changed"
fi

# 2. The environment file names the new release; the old one is kept beside it.
cp -p "$env_file" "$env_file.previous"
tmp=$(mktemp "$env_file.XXXXXX")
grep -v -E '^[[:space:]]*(export[[:space:]]+)?(IDQS_RELEASE|IDQS_DB)=' "$env_file" > "$tmp" || true
echo "$name=$value" >> "$tmp"
chmod --reference="$env_file" "$tmp"
mv "$tmp" "$env_file"

# 3. One replica at a time, each ready before the next.
for port in "${ports[@]}"; do
  echo "replica $port: restarting ..."
  bash -c "${restart_cmd//\{port\}/$port}" || die "restarting replica $port failed; the other replicas are untouched (roll back: cp $env_file.previous $env_file, then run this again for the replicas already switched)"
  deadline=$(( $(date +%s) + ready_timeout ))
  until curl -fsS -o /dev/null "http://127.0.0.1:$port/v3/ready" 2>/dev/null; do
    [ "$(date +%s)" -lt "$deadline" ] || die "replica $port is not ready after ${ready_timeout} s (see its log); the replicas after it are untouched"
    sleep 0.2
  done
  echo "replica $port: ready, serving $(curl -fsS "http://127.0.0.1:$port/v3/version")"
  # nginx skips a replica for fail_timeout after it refused a request; restarting the next one
  # before this one is back in rotation would leave a single replica, and one hiccup there a 502.
  [ "$port" = "${ports[-1]}" ] || sleep "$settle_s"
done
echo "all ${#ports[@]} replicas switched to $name=$value"
