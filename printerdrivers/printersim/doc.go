// Package printersim is a simulated ESC/POS receipt printer for tests,
// demos and drills. It accepts connections like a network printer (TCP
// port 9100) or sits at the end of a serial line (ServeSerial: a tty such
// as one end of a socat pty pair, opened again whenever it comes back
// after an unplug). It prints what it receives one ticket at a time like
// one physical printer, writes every cut ticket as one JSON line
// {"task_no","text","at"} (Options.Out) and, for people watching, as the
// text it reads on paper (Options.Paper, Ticket.PaperText).
//
// It answers like an Epson TM-T88V (Options.Model tm, the default), as real
// ESC/POS clients expect (the byte layouts are Epson's ESC/POS reference);
// model basic ignores GS ( H, as most low-cost ESC/POS printers do, and
// names another maker to GS I; model dumb answers only DLE EOT (and under
// lost_ack not the status request that follows a ticket):
//
//   - DLE EOT n, real-time status: one byte at once, whatever waits to print.
//   - GS ( H, process ID (the gateway's confirmation): 37 22 d1..d4 00 once
//     everything received before it has printed.
//   - GS r n, status (1 paper sensor, 2 drawer): one byte, in turn with
//     printing.
//   - GS I n, printer ID, in turn with printing: model ID (20h), type ID
//     and version ID as one byte (n = 1..3, 49..51); firmware, maker
//     "EPSON", model "TM-T88V", serial number and font as 5F <text> 00
//     (n = 65..69).
//   - GS a n, automatic status back: the 4-byte status at once when
//     enabled, after every change of an enabled item and after every
//     ticket printed; ESC @ turns it off again (as the ESC @ that starts
//     every Encode'd ticket does). Both take effect as they arrive.
//   - DLE ENQ n is accepted and does nothing: no simulated fault is a
//     recoverable error.
//
// The status bytes of DLE EOT, GS r and automatic status back are built
// from one status, so they always agree.
//
// It also speaks the printers' HTTP protocols, with the same faults:
// ServeEPOS is an Epson printer's ePOS-Print service (with a print job log
// when asked), and NewCloudPRNT makes it a Star printer polling a
// CloudPRNT server (Star PRNT, ESC/POS or plain text jobs).
//
// Faults can be switched on and off while it runs (SetFault, or PUT /fault
// on the control handler): offline, paper_end and cover_open stop printing
// and keep what was received, as a printer's buffer does, until the fault
// clears (only DLE EOT and automatic status back answer meanwhile); slow
// delays each ticket; drop closes the connection mid-ticket; lost_ack
// prints but never answers a confirmation request (GS ( H, GS r); down
// refuses new connections (on a serial line: keeps the device closed, a
// printer switched off).
package printersim
