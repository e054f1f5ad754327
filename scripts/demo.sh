#!/usr/bin/env bash
# Runs the demo: two simulated printers, a gateway on the demo config, a few
# sample orders, then the printers' paper as it comes out. Where PostgreSQL
# is installed (initdb, pg_ctl) it also runs a throwaway database and the
# cloud, and links the gateway to it: the full chain. Ctrl-C stops
# everything and ends with exit status 0; so does whatever else ends it
# (SIGTERM, SIGHUP, the reader of its output going away as in
# `make demo | tee demo.log`, the make above it dying): nothing it started
# stays running.
#
# Settings, from the environment:
#   BIN             where the binaries are (default bin)
#   DEMO_OUT        where the demo writes (default demo-out)
#   DEMO_PORT_BASE  N: listen on ports N to N+5 instead of 8080 (gateway),
#                   9090 (cloud), 9101, 9102 (printers), 9201, 9202 (their
#                   control APIs)
#   DEMO_CLOUD      off: no PostgreSQL and no cloud, even where installed
set -euo pipefail
cd "$(dirname "$0")/.."

# On a terminal, run the demo as a job of its own, in the foreground: Ctrl-C
# then interrupts the demo alone, which stops everything and exits 0, and
# never reaches make (which would end with "Error 130" or die of it).
# Where the terminal stays with the job above (make piped into tee), Ctrl-C
# reaches that job instead and ends it: the demo notices that it is gone
# (below) and stops everything.
if [ -t 0 ] && [ -z "${STOREPRINT_DEMO_JOB:-}" ]; then
  set -m
  rc=0
  STOREPRINT_DEMO_JOB=$$ "$0" "$@" || rc=$?
  [ "$rc" = 130 ] && rc=0 # interrupted before it could say so itself
  exit "$rc"
fi

bin=${BIN:-bin}
out=${DEMO_OUT:-demo-out}
base=${DEMO_PORT_BASE:-}
if [ -n "$base" ]; then
  gwport=$base cloudport=$((base + 1)) hotport=$((base + 2)) passport=$((base + 3))
  hotctl=$((base + 4)) passctl=$((base + 5))
else
  gwport=8080 cloudport=9090 hotport=9101 passport=9102 hotctl=9201 passctl=9202
fi

rm -rf "$out/data" "$out/pg" "$out"/*.jsonl "$out"/*.txt
mkdir -p "$out"
outabs=$(cd "$out" && pwd)
pids=()
simpids=()
pgdata=""
stopped=""
runpg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# say writes a line for the person watching, if anyone still reads: with
# the reader gone a write fails (SIGPIPE is ignored while stopping) and
# the demo goes on stopping.
say() { printf '%s\n' "$*" 2>/dev/null || true; }
stop() {
  [ -n "$stopped" ] && return
  stopped=1
  trap '' PIPE INT TERM HUP
  say
  say "stopping..."
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$pgdata" ]; then runpg "$pgbin/pg_ctl" -D "$pgdata" -m fast stop >/dev/null 2>&1 || true; fi
  say "stopped."
}
trap 'stop; exit 0' INT TERM HUP PIPE
trap stop EXIT
trap '' TSTP # Ctrl-Z would leave the printers and the gateway stopped behind

waitfor() { # url, pid, log
  for _ in $(seq 1 100); do
    curl -fsS "$1" >/dev/null 2>&1 && return 0
    if ! kill -0 "$2" 2>/dev/null; then echo "failed to start; see $3:"; tail -5 "$3"; exit 1; fi
    sleep 0.2
  done
  echo "timed out waiting for $1"; exit 1
}

config="$out/gateway.toml"
sed -e "s|\"./demo-out/data\"|\"$outabs/data\"|" \
  -e "s|127.0.0.1:8080|127.0.0.1:$gwport|" \
  -e "s|127.0.0.1:9101|127.0.0.1:$hotport|" \
  -e "s|127.0.0.1:9102|127.0.0.1:$passport|" \
  testdata/demo/gateway.toml >"$config"
cloud=""
pgbin=""
if [ "${DEMO_CLOUD:-}" = off ]; then
  :
elif command -v initdb >/dev/null 2>&1; then
  pgbin=$(dirname "$(command -v initdb)")
elif ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  pgbin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
fi
if [ -n "$pgbin" ] && { [ "$(id -u)" != 0 ] || id postgres >/dev/null 2>&1; }; then
  echo "PostgreSQL found: starting a throwaway database and the cloud"
  pgdata="$outabs/pg/data"
  mkdir -p "$out/pg"
  [ "$(id -u)" = 0 ] && chown -R postgres "$out/pg"
  pgport=55432
  while (echo >"/dev/tcp/127.0.0.1/$pgport") 2>/dev/null; do pgport=$((pgport + 1)); done
  runpg "$pgbin/initdb" -D "$pgdata" -U postgres -A trust >/dev/null
  runpg "$pgbin/pg_ctl" -D "$pgdata" -l "$outabs/pg/log" -w \
    -o "-p $pgport -k $outabs/pg -c listen_addresses=127.0.0.1" start >/dev/null
  admin=demo-admin-token-0123456789
  cloud=http://127.0.0.1:$cloudport
  "$bin/storeprint-cloud" run --listen "127.0.0.1:$cloudport" --admin-token "$admin" \
    --database-url "postgres://postgres@127.0.0.1:$pgport/postgres?sslmode=disable" 2>"$out/cloud.log" >/dev/null &
  pids+=($!)
  waitfor "$cloud/healthz" "${pids[-1]}" "$out/cloud.log"
  api() { curl -fsS -X "$1" "$cloud$2" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' --data-binary "$3"; }
  api POST /v1/admin/tenants '{"tenant_id":"demo-chain","name":"Demo chain","reason":"demo"}' >/dev/null
  api POST /v1/admin/stores '{"store_id":"demo-store","tenant_id":"demo-chain","name":"Demo store","reason":"demo"}' >/dev/null
  gw=$(api POST /v1/admin/stores/demo-store/gateways '{"reason":"demo"}')
  gwid=$(printf '%s' "$gw" | sed -n 's/.*"gateway_id":"\([^"]*\)".*/\1/p')
  gwtoken=$(printf '%s' "$gw" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  printf '\n[cloud]\nurl = "ws://127.0.0.1:%s/v1/sync"\ninsecure = true\ngateway_id = "%s"\ntoken = "%s"\n' "$cloudport" "$gwid" "$gwtoken" >>"$config"
elif [ "${DEMO_CLOUD:-}" = off ]; then
  echo "DEMO_CLOUD=off: running the gateway alone (no cloud)"
else
  echo "PostgreSQL not found: running the gateway alone (no cloud)"
fi

for printer in "hot-1 $hotport $hotctl" "pass-1 $passport $passctl"; do
  read -r name port ctl <<<"$printer"
  "$bin/storeprint" printersim --name "$name" --listen "127.0.0.1:$port" --control "127.0.0.1:$ctl" \
    --out "$out/$name.jsonl" --paper "$out/$name.txt" 2>"$out/$name.log" &
  pids+=($!)
  simpids+=("$!:$ctl:$name")
done
# The printers listen before the gateway looks at them: a port already in
# use stops the demo with the printer's log, not a printer silently missing.
for sim in "${simpids[@]}"; do
  IFS=: read -r pid ctl name <<<"$sim"
  waitfor "http://127.0.0.1:$ctl/fault" "$pid" "$out/$name.log"
done
"$bin/storeprint-gateway" run --config "$config" 2>"$out/gateway.log" &
gwpid=$!
pids+=($gwpid)
gwurl=http://127.0.0.1:$gwport
waitfor "$gwurl/healthz" "$gwpid" "$out/gateway.log"

echo "posting sample orders to $gwurl/v1/orders"
while IFS= read -r order; do
  id=$(printf '%s' "$order" | sed -n 's/.*"order_id":"\([^"]*\)".*/\1/p')
  code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "$gwurl/v1/orders" -H 'Authorization: Bearer pos-dev-token' \
    -H 'Content-Type: application/json' --data-binary "$order")
  echo "  $id: HTTP $code"
done < testdata/demo/orders.jsonl

cat <<MSG

storeprint demo is running.
  kitchen LAN page:   $gwurl/?token=pos-dev-token
  POS API:            curl -H 'Authorization: Bearer pos-dev-token' $gwurl/v1/tasks
  paper (simulated):  printed below as it comes out; also $out/hot-1.txt and
                      $out/pass-1.txt, and one JSON line a ticket in $out/*.jsonl
  inject a fault:     curl -X PUT -d '{"fault":"paper_end"}' http://127.0.0.1:$hotctl/fault
  logs:               $out/*.log
MSG
if [ -n "$cloud" ]; then
  cat <<MSG
  HQ dashboard:       $cloud/?token=$admin
  cloud order:        curl -H 'Authorization: Bearer $admin' -d '{"order_id":"web-1","items":[{"name":"外卖套餐","qty":1,"station":"hot"}]}' $cloud/v1/stores/demo-store/orders
MSG
fi
echo "Ctrl-C stops everything."
echo
tail -q -n +1 -F "$out/hot-1.txt" "$out/pass-1.txt" 2>/dev/null &
tailpid=$!
pids+=($tailpid)
# Run until a signal (the traps above), the gateway stopping by itself,
# the paper's reader going away (tail exits once its output pipe is
# closed), or the job that started the demo ending without passing the
# signal on.
parent=${STOREPRINT_DEMO_JOB:-}
[ "$parent" = 1 ] && parent=""
while :; do
  if ! kill -0 "$gwpid" 2>/dev/null; then
    rc=0
    wait "$gwpid" || rc=$?
    say "the gateway stopped by itself (exit status $rc); see $out/gateway.log"
    exit 1
  fi
  if ! kill -0 "$tailpid" 2>/dev/null; then
    stop
    exit 0
  fi
  if [ -n "$parent" ] && ! kill -0 "$parent" 2>/dev/null; then
    stop
    exit 0
  fi
  sleep 1 &
  wait $! || true
done
