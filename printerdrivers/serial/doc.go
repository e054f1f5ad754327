// Package serial drives receipt printers on a serial line (an RS-232 port
// or a USB-serial adapter: /dev/ttyUSB0, COM3) through go.bug.st/serial.
// It is a transport of printerdrivers.Pipeline speaking the same ESC/POS
// protocol as tcp: status by DLE EOT before anything is sent, then the
// byte stream the pipeline writes (the ticket rendered by escpos and the
// request of the printer's confirmation method: GS ( H, GS r 1 or none)
// and the answers it reads. The pipeline confirms and classifies every
// outcome.
//
// The port stays open between calls; input left over from an earlier call
// is discarded before each one. A read or write error (the adapter was
// unplugged) closes the port and the next call opens it again, so a
// printer plugged back in prints again without a restart.
//
// Flow control: go.bug.st/serial v1.8.0 offers none (it switches RTS/CTS
// and XON/XOFF off when it opens a port), so on Linux the driver sets the
// termios flags itself (CRTSCTS for rtscts; IXON and IXOFF for xonxoff).
// On other systems flow other than none is refused (see checkConfig).
package serial
