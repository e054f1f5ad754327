// Package tcp drives network receipt printers over a raw TCP socket
// (port 9100, "JetDirect" style): status by DLE EOT, the ticket rendered by
// escpos, and a process ID request (GS ( H) whose answer is the printer's
// own confirmation that the ticket came out. Every outcome is classified
// as gateway.PrintError says: not sent, not ready, or uncertain.
package tcp
