// Package winspool prints through the Windows print spooler: each ticket
// is one RAW document (OpenPrinter, StartDocPrinter with datatype RAW,
// StartPagePrinter, WritePrinter, EndPagePrinter, EndDocPrinter), so the
// ESC/POS bytes from escpos reach the printer untouched, and the spooler's
// job id is recorded with the submitted receipt.
//
// The spooler cannot pass on a printer's answer, so there is no process ID
// confirmation here. The outcome is read by polling the job (GetJob): a job
// the spooler reports printed or complete only means the data reached the
// device. With trust_spooler the gateway counts that as printed; without it
// the outcome is uncertain and the printer's on_uncertain policy applies.
// The printer's readiness before sending comes from the queue's status
// (GetPrinter level 2: offline, paper out, door open, error).
//
// It is a transport of printerdrivers.Pipeline, which classifies every
// outcome. The status mapping and the polling work against the Spooler
// interface and run on every system; winspooltest has a
// fake spooler for tests. The Windows build (winspool_windows.go) calls
// winspool.drv; elsewhere New returns an error.
package winspool
