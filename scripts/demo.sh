#!/usr/bin/env bash
# Runs the demo: two simulated printers, a gateway on the demo config, a few
# sample orders. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

out=demo-out
mkdir -p "$out"
rm -f "$out"/*.jsonl
pids=()
stop() {
  trap - INT TERM EXIT
  echo
  echo "stopping..."
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

bin/storeprint printersim --listen 127.0.0.1:9101 --out "$out/hot-1.jsonl" --control 127.0.0.1:9201 2>"$out/hot-1.log" &
pids+=($!)
bin/storeprint printersim --listen 127.0.0.1:9102 --out "$out/pass-1.jsonl" --control 127.0.0.1:9202 2>"$out/pass-1.log" &
pids+=($!)
bin/storeprint-gateway run --config testdata/demo/gateway.toml 2>"$out/gateway.log" &
pids+=($!)

gw=http://127.0.0.1:8080
for i in $(seq 1 50); do
  curl -fsS "$gw/healthz" >/dev/null 2>&1 && break
  if ! kill -0 "${pids[2]}" 2>/dev/null; then
    echo "the gateway did not start; see $out/gateway.log:"; tail -5 "$out/gateway.log"; exit 1
  fi
  sleep 0.2
done

echo "posting sample orders to $gw/v1/orders"
while IFS= read -r order; do
  curl -sS -X POST "$gw/v1/orders" -H 'Authorization: Bearer pos-dev-token' \
    -H 'Content-Type: application/json' --data-binary "$order"
done < testdata/demo/orders.jsonl

cat <<MSG

storeprint demo is running.
  POS API / LAN page: $gw/   (token: pos-dev-token)
  tasks:              curl -H 'Authorization: Bearer pos-dev-token' $gw/v1/tasks
  printers:           curl -H 'Authorization: Bearer pos-dev-token' $gw/v1/printers
  paper (simulated):  $out/hot-1.jsonl and $out/pass-1.jsonl (printed below as they come)
  inject a fault:     curl -X PUT -d '{"fault":"paper_end"}' http://127.0.0.1:9201/fault
  logs:               $out/gateway.log
Ctrl-C stops everything.

MSG
tail -n +1 -F "$out/hot-1.jsonl" "$out/pass-1.jsonl" 2>/dev/null &
pids+=($!)
wait "${pids[2]}"
