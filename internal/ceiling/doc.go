// Command ceiling is the least a durable order endpoint can do, for the
// gateway's benchmarks to measure it against: net/http, POST /v1/orders
// decodes the order, appends it to one file and answers 201 once the file
// is synced (fdatasync), one sync shared by every request that arrived
// meanwhile (group commit). With --sync=false it answers without syncing:
// HTTP and decoding alone. It prints "listening ADDR" once it serves.
//
//	ceiling --listen 127.0.0.1:0 --file orders.jsonl [--sync=false]
package main
