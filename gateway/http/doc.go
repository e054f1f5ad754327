// Package http serves the gateway's POS API, /healthz, /metrics and the
// kitchen's LAN page.
package http
