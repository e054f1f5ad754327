// Package printerdrivers reaches physical receipt printers for the
// gateway. Its root holds the confirmed-print pipeline (Pipeline), the one
// place where the steps of a print attempt and the classification of its
// outcome are written: encode, status gate, Prepare, first byte,
// Submitted, the printer's confirmation. No byte leaves before Prepare;
// from the first byte on every failure is uncertain; only the printer's
// own answer is success.
//
// Each driver is a Pipeline on its own Transport (connect, status, send,
// confirm, job id), one subpackage each. On the ESC/POS byte streams (tcp,
// serial) the pipeline itself confirms, by the printer's confirm method:
// process_id (GS ( H), transmit_status (GS r 1) or status (DLE EOT only),
// or for "auto" the strongest the printer answers (confirm.go). The
// drivers: tcp (raw port 9100), serial
// (USB-serial and RS-232), winspool (the Windows print spooler), epos
// (Epson ePOS-Print over HTTP) and cloudprnt (Star printers that poll the
// gateway with CloudPRNT; cloudprnt/protocol is the wire protocol, served
// by the cloud too). escpos and starprnt render tickets in the printers'
// languages; printersim is a simulated printer for tests and demos;
// printertest is the conformance suite every driver runs.
//
// Each driver package owns its config keys and its constructor: from its
// init function it registers its opener with Register and its options (a
// struct whose toml tags name its keys, with their defaults and checks)
// with gateway.RegisterDriverConfig, so that the gateway's config holds
// the keys every printer has and hands the rest, decoded into those
// options, to the driver, whose constructor reads them. A program has the drivers it imports; a new printer kind
// is a new subpackage and one import in the programs.
//
// Drivers talk in the gateway's terms and never import each other.
package printerdrivers
