// Package printerdrivers holds what the gateway needs to reach physical
// receipt printers: ESC/POS ticket encoding and status parsing (escpos), one
// subpackage per transport implementing gateway.Printer (tcp; serial and the
// Windows spooler to follow), a simulated ESC/POS printer for tests and
// demos (printersim), and the conformance suite every transport runs
// (printertest).
//
// The root package has no code: drivers talk in the gateway's terms and never
// import each other.
package printerdrivers
