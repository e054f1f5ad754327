// Command storeprint-cloud is the cloud service: HQ's source of truth on
// PostgreSQL. It serves the admin and tenant JSON API, accepts
// cloud-originated orders for the stores' gateways, and keeps the tasks,
// receipts and audit trail the gateways replay upstream.
//
//	storeprint-cloud run --listen ADDR --admin-token TOKEN
//	storeprint-cloud migrate
//
// main.go only handles signals and exit codes; the program is Main, so
// tests run it for real on 127.0.0.1:0.
package main
