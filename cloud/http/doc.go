// Package http serves the cloud's JSON API (DESIGN.md, "Cloud API") on top
// of the cloud services: admin actions, cloud-originated orders, tasks
// with their receipts, stores with their gateways and printers, commands
// for the stores' gateways, the audit trail, /healthz and /metrics; and
// the HQ dashboard: an embedded page at / (web/, under a CSP that allows
// only this origin) that reads GET /v1/dashboard every 2 s and GET
// /v1/search, and sends make-up prints through the audited retry command.
//
// Every /v1 request carries "Authorization: Bearer <token>": the admin
// token sees everything, a tenant token only its tenant's stores (another
// tenant's store is 404, never its data), and a gateway token is refused
// here (it is for the sync link). Errors are JSON {"error": "..."} with a
// status from one table (see storeprint.HTTPStatus). Secrets are never logged.
package http
