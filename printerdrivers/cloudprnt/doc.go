// Package cloudprnt is the transport of Star printers that fetch their
// tickets with Star CloudPRNT (mC-Print3, TSP100IV): the printer polls
// the gateway's /v1/cloudprnt (Server) and is told apart by its MAC
// address, with its password as HTTP Basic auth when it has one. A ticket
// is offered at the printer's next poll (jobReady, mediaTypes, a jobToken
// carrying the attempt's process id); its GET of the ticket is the first
// byte; its DELETE with code 200 OK is the confirmation, a 5xx code says
// it could not use the ticket (not printed), any other code leaves the
// outcome open, as does a ticket fetched and not confirmed within the
// confirm timeout. The status code of each poll is the printer's state; a
// printer that has not polled for three poll intervals is offline.
//
// Tickets go in Star PRNT mode (emulation = "starprnt", starprnt) or as
// ESC/POS for a printer in ESC/POS emulation (emulation = "escpos",
// application/octet-stream). The steps and the classification of every
// outcome are printerdrivers.Pipeline's; the wire protocol is
// cloudprnt/protocol's, which the cloud serves too.
package cloudprnt
