package serial

import (
	"fmt"

	bugst "go.bug.st/serial"
	"golang.org/x/sys/unix"
)

// openPort opens the device at path with mode and the flow control flow.
//
// go.bug.st/serial switches RTS/CTS and XON/XOFF off as it opens a port
// and has no setting to switch them on, nor a way to reach the port's
// descriptor. Termios settings belong to the device, not to a descriptor:
// a second descriptor, opened before the library takes the device for
// itself (TIOCEXCL), sets them once the library is done.
func openPort(path string, mode *bugst.Mode, flow string) (bugst.Port, error) {
	if err := checkFlow(flow); err != nil {
		return nil, err
	}
	if flow == "none" || flow == "" {
		return bugst.Open(path, mode)
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// A second descriptor of the device: closing it loses nothing.
	defer func() { _ = unix.Close(fd) }()
	port, err := bugst.Open(path, mode)
	if err != nil {
		return nil, err
	}
	if err := setFlow(fd, flow); err != nil {
		port.Close()
		return nil, err
	}
	return port, nil
}

// setFlow sets the flow control of the tty fd: rtscts is CRTSCTS (the
// UART sends only while the printer raises CTS); xonxoff is IXON (the
// kernel stops sending when the printer sends XOFF, 0x13, and goes on at
// XON, 0x11; both are taken out of the input) and IXOFF (the kernel sends
// XOFF when its input buffer fills). Neither byte is ever part of a status
// or confirmation answer, so taking them out loses nothing.
func setFlow(fd int, flow string) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("flow %s: read termios: %w", flow, err)
	}
	t.Cflag &^= unix.CRTSCTS
	t.Iflag &^= unix.IXON | unix.IXOFF | unix.IXANY
	switch flow {
	case "none":
	case "rtscts":
		t.Cflag |= unix.CRTSCTS
	case "xonxoff":
		t.Iflag |= unix.IXON | unix.IXOFF
		t.Cc[unix.VSTART] = 0x11
		t.Cc[unix.VSTOP] = 0x13
	default:
		return fmt.Errorf("flow: %q is not one of none, rtscts, xonxoff", flow)
	}
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return fmt.Errorf("flow %s: set termios: %w", flow, err)
	}
	return nil
}

// checkFlow reports a flow control this system cannot set.
func checkFlow(flow string) error {
	switch flow {
	case "", "none", "rtscts", "xonxoff":
		return nil
	}
	return fmt.Errorf("flow: %q is not one of none, rtscts, xonxoff", flow)
}
