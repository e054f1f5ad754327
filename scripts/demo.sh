#!/usr/bin/env bash
# Runs the demo: two simulated printers, a gateway on the demo config, a few
# sample orders. Where PostgreSQL is installed (initdb, pg_ctl) it also runs
# a throwaway database and the cloud, and links the gateway to it: the full
# chain. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

out=demo-out
rm -rf "$out/data" "$out/pg" "$out"/*.jsonl
mkdir -p "$out"
pids=()
pgdata=""
runpg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop() {
  trap - INT TERM HUP PIPE EXIT
  echo
  echo "stopping..."
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$pgdata" ]; then runpg "$pgbin/pg_ctl" -D "$pgdata" -m fast stop >/dev/null 2>&1 || true; fi
}
trap stop INT TERM HUP PIPE EXIT

waitfor() { # url, pid, log
  for _ in $(seq 1 100); do
    curl -fsS "$1" >/dev/null 2>&1 && return 0
    if ! kill -0 "$2" 2>/dev/null; then echo "failed to start; see $3:"; tail -5 "$3"; exit 1; fi
    sleep 0.2
  done
  echo "timed out waiting for $1"; exit 1
}

config=testdata/demo/gateway.toml
cloud=""
pgbin=""
if command -v initdb >/dev/null 2>&1; then
  pgbin=$(dirname "$(command -v initdb)")
elif ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  pgbin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
fi
if [ -n "$pgbin" ] && { [ "$(id -u)" != 0 ] || id postgres >/dev/null 2>&1; }; then
  echo "PostgreSQL found: starting a throwaway database and the cloud"
  pgdata="$PWD/$out/pg/data"
  mkdir -p "$out/pg"
  [ "$(id -u)" = 0 ] && chown -R postgres "$out/pg"
  pgport=55432
  while (echo >"/dev/tcp/127.0.0.1/$pgport") 2>/dev/null; do pgport=$((pgport + 1)); done
  runpg "$pgbin/initdb" -D "$pgdata" -U postgres -A trust >/dev/null
  runpg "$pgbin/pg_ctl" -D "$pgdata" -l "$PWD/$out/pg/log" -w \
    -o "-p $pgport -k $PWD/$out/pg -c listen_addresses=127.0.0.1" start >/dev/null
  admin=demo-admin-token-0123456789
  bin/storeprint-cloud run --listen 127.0.0.1:9090 --admin-token "$admin" \
    --database-url "postgres://postgres@127.0.0.1:$pgport/postgres?sslmode=disable" 2>"$out/cloud.log" >/dev/null &
  pids+=($!)
  waitfor http://127.0.0.1:9090/healthz "${pids[-1]}" "$out/cloud.log"
  api() { curl -fsS -X "$1" "http://127.0.0.1:9090$2" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' --data-binary "$3"; }
  api POST /v1/admin/tenants '{"tenant_id":"demo-chain","name":"Demo chain","reason":"demo"}' >/dev/null
  api POST /v1/admin/stores '{"store_id":"demo-store","tenant_id":"demo-chain","name":"Demo store","reason":"demo"}' >/dev/null
  gw=$(api POST /v1/admin/stores/demo-store/gateways '{"reason":"demo"}')
  gwid=$(printf '%s' "$gw" | sed -n 's/.*"gateway_id":"\([^"]*\)".*/\1/p')
  gwtoken=$(printf '%s' "$gw" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  config="$out/gateway.toml"
  { cat testdata/demo/gateway.toml
    printf '\n[cloud]\nurl = "ws://127.0.0.1:9090/v1/sync"\ninsecure = true\ngateway_id = "%s"\ntoken = "%s"\n' "$gwid" "$gwtoken"
  } > "$config"
  cloud=http://127.0.0.1:9090
else
  echo "PostgreSQL not found: running the gateway alone (no cloud)"
fi

bin/storeprint printersim --listen 127.0.0.1:9101 --out "$out/hot-1.jsonl" --control 127.0.0.1:9201 2>"$out/hot-1.log" &
pids+=($!)
bin/storeprint printersim --listen 127.0.0.1:9102 --out "$out/pass-1.jsonl" --control 127.0.0.1:9202 2>"$out/pass-1.log" &
pids+=($!)
bin/storeprint-gateway run --config "$config" 2>"$out/gateway.log" &
gwpid=$!
pids+=($gwpid)
gwurl=http://127.0.0.1:8080
waitfor "$gwurl/healthz" "$gwpid" "$out/gateway.log"

echo "posting sample orders to $gwurl/v1/orders"
while IFS= read -r order; do
  curl -sS -X POST "$gwurl/v1/orders" -H 'Authorization: Bearer pos-dev-token' \
    -H 'Content-Type: application/json' --data-binary "$order"
done < testdata/demo/orders.jsonl

cat <<MSG

storeprint demo is running.
  kitchen LAN page:   $gwurl/?token=pos-dev-token
  POS API:            curl -H 'Authorization: Bearer pos-dev-token' $gwurl/v1/tasks
  paper (simulated):  $out/hot-1.jsonl and $out/pass-1.jsonl (printed below as they come)
  inject a fault:     curl -X PUT -d '{"fault":"paper_end"}' http://127.0.0.1:9201/fault
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
tail -n +1 -F "$out/hot-1.jsonl" "$out/pass-1.jsonl" 2>/dev/null &
pids+=($!)
wait "$gwpid"
