// Package winspooltest is a fake Windows print spooler for testing the
// winspool driver on any system: the spooler cannot run here, so this is
// the one hand-written fake the tests use.
//
// Each queue has a simulated printer (printersim) behind it. Ended
// documents are sent to it in order over an in-memory pipe, the way a port
// monitor writes to the printer's port, so the paper is real: the
// simulator decodes the RAW bytes, prints, and its faults show as the
// queue's status. Tests can also drive job states by hand (QueueOptions.
// Manual) and make single calls fail (Spooler.Fail).
package winspooltest
