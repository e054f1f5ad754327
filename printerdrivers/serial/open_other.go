//go:build !linux

package serial

import (
	"fmt"
	"runtime"

	bugst "go.bug.st/serial"
)

// openPort opens the device at path with mode. Only flow = "none" gets
// here: see checkFlow.
func openPort(path string, mode *bugst.Mode, flow string) (bugst.Port, error) {
	if err := checkFlow(flow); err != nil {
		return nil, err
	}
	return bugst.Open(path, mode)
}

// checkFlow refuses flow control: go.bug.st/serial v1.8.0 switches it off
// as it opens a port and offers no setting for it, and this driver sets it
// itself only on Linux.
func checkFlow(flow string) error {
	switch flow {
	case "", "none":
		return nil
	case "rtscts", "xonxoff":
		return fmt.Errorf("flow: %q is not available on %s: go.bug.st/serial has no flow control setting and the driver sets it itself only on Linux; use flow = \"none\" and a printer set to no handshake", flow, runtime.GOOS)
	}
	return fmt.Errorf("flow: %q is not one of none, rtscts, xonxoff", flow)
}
