// Package tcp is the transport of network receipt printers on a raw TCP
// socket (port 9100, "JetDirect" style): status by DLE EOT, then the byte
// stream printerdrivers.Pipeline writes (the ticket rendered by escpos and
// the request of the printer's confirmation method: GS ( H, GS r 1 or
// none) and the printer's answers it reads. The steps, the confirmation
// methods and the classification of every outcome are the pipeline's.
package tcp
