#!/usr/bin/env bash
# Stands in for a `pocketbase` executable that a client's test suite starts itself: translates the
# PocketBase command lines such suites use into Cairn's and runs Cairn instead.
#
#   pocketbase serve [--dir=D] [--http=HOST:PORT] [--dev]   → cairn serve --dir D --host HOST --port PORT
#   pocketbase admin create EMAIL PASS [--dir=D]             → cairn admin create (v0.22)
#   pocketbase superuser create|upsert EMAIL PASS [--dir=D]  → cairn admin create (≥ 0.23)
#
# Copy or link it where the suite looks for its binary, with CAIRN_ROOT naming the Cairn checkout.
# An administrator created while `serve` starts waits for the server to answer first (a suite may
# give PocketBase a fraction of a second to start; Cairn takes longer, which this file reports on
# stderr rather than hides).
set -euo pipefail
root=${CAIRN_ROOT:?set CAIRN_ROOT to the Cairn checkout}
bin="$root/bin/cairn.js"

dir=./pb_data
http=127.0.0.1:8090
args=()
for a in "$@"; do
  case "$a" in
    --dir=*) dir=${a#--dir=} ;;
    --http=*) http=${a#--http=} ;;
    --dev) ;;
    *) args+=("$a") ;;
  esac
done
set -- "${args[@]}"
mkdir -p "$dir"

case "${1:-}" in
  serve)
    host=${http%:*}
    port=${http##*:}
    echo "$port" >"$dir/.compat-port"
    export CAIRN_RATE_LIMIT=${CAIRN_RATE_LIMIT:-off} CAIRN_DRAIN_MS=${CAIRN_DRAIN_MS:-0}
    exec node "$bin" serve --dir "$dir" --host "${host:-127.0.0.1}" --port "$port" --hooks off --pb-hooks off
    ;;
  admin | superuser)
    email=$3
    password=$4
    if [[ -f "$dir/.compat-port" ]]; then
      port=$(cat "$dir/.compat-port")
      start=$SECONDS
      until curl -sf "http://127.0.0.1:$port/api/health" >/dev/null; do
        ((SECONDS - start < 60)) || break
        sleep 0.1
      done
      echo "pocketbase-shim: cairn answered on port $port after $((SECONDS - start)) s" >&2
    fi
    exec node "$bin" admin create "$email" "$password" --dir "$dir"
    ;;
  *)
    echo "pocketbase-shim: no translation for: $*" >&2
    exit 2
    ;;
esac
