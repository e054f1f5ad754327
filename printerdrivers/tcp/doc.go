// Package tcp is the transport of network receipt printers on a raw TCP
// socket (port 9100, "JetDirect" style): status by DLE EOT, the ticket
// rendered by escpos and a process ID request (GS ( H) in one write, and
// the printer's answer to that request as its own confirmation that the
// ticket came out. The steps and the classification of every outcome are
// printerdrivers.Pipeline's.
package tcp
