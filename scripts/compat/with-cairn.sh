#!/usr/bin/env bash
# Runs a command with Cairn standing where a client's test suite expects PocketBase: `cairn serve`
# on a fixed port (8090 by default, as PocketBase), in a network namespace of its own when run as
# root, so the suite's hard-coded port cannot meet another server on this machine.
#
#   scripts/compat/with-cairn.sh [--cairn DIR] [--dir DATA] [--port N] [--admin EMAIL PASSWORD]
#       [--import PB_DATA] [--pb-migrations DIR] [--pb-hooks DIR] [--log FILE] -- command args...
#
# --dir: Cairn's data directory (a fresh temporary one when not given); --import: a PocketBase
# pb_data (or data.db) imported into it first; --admin: an administrator created before start, as
# `pocketbase superuser upsert` does for the suites. Environment: CAIRN_* variables pass through;
# CAIRN_RATE_LIMIT defaults to off (PocketBase's rate limits are off by default).
set -euo pipefail

cairn=$(pwd)
dir=""
port=8090
admin_email=""
admin_password=""
import=""
pb_migrations=""
pb_hooks="off"
log=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cairn) cairn=$(cd "$2" && pwd); shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --admin) admin_email=$2; admin_password=$3; shift 3 ;;
    --import) import=$2; shift 2 ;;
    --pb-migrations) pb_migrations=$2; shift 2 ;;
    --pb-hooks) pb_hooks=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "with-cairn.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $# -gt 0 ]] || { echo "with-cairn.sh: no command given after --" >&2; exit 2; }

# Re-enter in a private network namespace (only loopback), once.
if [[ -z "${WITH_CAIRN_NETNS:-}" && $(id -u) -eq 0 ]] && command -v unshare >/dev/null; then
  export WITH_CAIRN_NETNS=1
  args=(--cairn "$cairn" --port "$port" --pb-hooks "$pb_hooks")
  [[ -n "$dir" ]] && args+=(--dir "$dir")
  [[ -n "$admin_email" ]] && args+=(--admin "$admin_email" "$admin_password")
  [[ -n "$import" ]] && args+=(--import "$import")
  [[ -n "$pb_migrations" ]] && args+=(--pb-migrations "$pb_migrations")
  [[ -n "$log" ]] && args+=(--log "$log")
  exec unshare --net "$0" "${args[@]}" -- "$@"
fi
if [[ -n "${WITH_CAIRN_NETNS:-}" ]]; then ip link set lo up; fi

if [[ -z "$dir" ]]; then dir=$(mktemp -d /tmp/with-cairn.XXXXXX); fi
bin="$cairn/bin/cairn.js"
if [[ -n "$import" ]]; then node "$bin" import pocketbase "$import" --dir "$dir" >/dev/null; fi
if [[ -n "$admin_email" ]]; then node "$bin" admin create "$admin_email" "$admin_password" --dir "$dir" >/dev/null; fi

serve=(node "$bin" serve --host :: --port "$port" --dir "$dir" --hooks off --pb-hooks "$pb_hooks")
[[ -n "$pb_migrations" ]] && export CAIRN_PB_MIGRATIONS_DIR="$pb_migrations"
export CAIRN_RATE_LIMIT=${CAIRN_RATE_LIMIT:-off} CAIRN_DRAIN_MS=${CAIRN_DRAIN_MS:-0}
"${serve[@]}" >"${log:-/dev/null}" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT

deadline=$((SECONDS + 60))
until curl -sf "http://127.0.0.1:$port/api/health" >/dev/null; do
  if ! kill -0 "$server" 2>/dev/null; then echo "with-cairn.sh: cairn serve exited" >&2; exit 1; fi
  if ((SECONDS > deadline)); then echo "with-cairn.sh: no answer on port $port within 60 s" >&2; exit 1; fi
  sleep 0.1
done

set +e
"$@"
status=$?
exit $status
