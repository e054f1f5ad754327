// Package printertest is the conformance suite every gateway.Printer
// driver runs against the printer simulator: Exercise checks that each
// outcome (confirmed, not ready, not sent, uncertain) is classified exactly
// and that paper comes out exactly when it should.
//
// A driver plugs in with a Harness: a function that starts a fresh
// simulated printer and returns the driver connected to it, and one that
// returns a driver for a printer nobody answers for. StartTCP serves the
// simulator on a loopback port; StartSerial puts it at the end of a serial
// line made of a socat pty pair (PTYPair), where down and drop are the
// USB-serial device unplugged, as they are for a real serial printer.
// socat must be installed: without it the serial tests skip, and fail in
// CI (internal/testenv).
package printertest
