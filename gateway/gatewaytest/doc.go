// Package gatewaytest drives a running gateway through its POS API for
// tests, the same way from the HTTP server's tests (gateway/http) and the
// whole program's (cmd/storeprint-gateway).
//
// Config and its kin write the TOML configuration of a gateway whose
// printers are simulated printers on loopback sockets (StartSim). Call
// sends a request with the test token (Token) through Client, which checks
// every request and answer against the POS API's OpenAPI document (API).
// WaitStatus, Settle, WaitPrinter and WaitPrinted wait on the gateway's
// change stream or the simulator's paper, never on a sleep.
package gatewaytest
