// Package gateway is the store daemon's domain: orders, print tasks and their
// lifecycle, the dispatcher that drives tasks to printers, and the small
// interfaces the gateway consumes (its durable queue and its printers).
//
// Adapters live in subpackages named after what they wrap: gateway/badger
// (the durable queue), gateway/http (the POS API and LAN page).
package gateway
