// Package printersim is a simulated ESC/POS receipt printer for tests,
// demos and drills. It accepts connections like a network printer (TCP
// port 9100) or sits at the end of a serial line (ServeSerial: a tty such
// as one end of a socat pty pair, opened again whenever it comes back
// after an unplug). It answers real-time status requests (DLE EOT) at
// once, prints what it receives one ticket at a time like one physical
// printer, answers a process ID request (GS ( H) only after everything
// before it has been printed, and writes every cut ticket as one JSON line
// {"task_no","text","at"}.
//
// Faults can be switched on and off while it runs (SetFault, or PUT /fault
// on the control handler): offline, paper_end and cover_open stop printing
// and keep what was received, as a printer's buffer does, until the fault
// clears; slow delays each ticket; drop closes the connection mid-ticket;
// lost_ack prints but never answers the confirmation request; down refuses
// new connections (on a serial line: keeps the device closed, a printer
// switched off).
package printersim
