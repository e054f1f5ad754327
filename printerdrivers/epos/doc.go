// Package epos is the transport of Epson printers that speak ePOS-Print
// XML over HTTP (TM-m30, TM-T88VI, TM-m50 and the TM-i range): a SOAP
// envelope holding an <epos-print> document, POSTed to the printer's
// /cgi-bin/epos/service.cgi?devid=...&timeout=..., answered with a
// <response success code status/> once the ticket is printed. That answer
// is the printer's own confirmation; its error codes say whether the
// ticket did not print (DeviceNotFound, EX_TIMEOUT, a full queue) or may
// have printed in part (paper end, cover open, a cutter error); its
// status bits (ASB_*) give the printer's state. An empty document reads
// the status before anything is sent.
//
// Printers that keep a print job log (the ePOS-Print spooler function,
// job_log = true) get each ticket with a print job id made from the
// attempt (JobID), and the driver implements gateway.Settler: an attempt
// whose outcome is uncertain is settled by asking the printer for that
// job's status. Status queries are retried (go-retryablehttp); the print
// request never is.
//
// The steps and the classification of every outcome are
// printerdrivers.Pipeline's. xml.go and request.go hold the documents
// both ways, for the driver and for the printer simulator.
package epos
