// Package http serves the gateway's POS API, /healthz, /metrics and the
// kitchen's LAN page and screens. The server takes what it serves as
// small interfaces declared in service.go and storage.go, each the few
// methods its handlers call; the gateway and its store implement them.
package http
