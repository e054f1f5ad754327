package printersim

import (
	"fmt"
	"time"

	"go.bug.st/serial"
)

// DefaultBaud is the line speed of a serial device the simulator opens
// unless told otherwise; a pseudo-terminal ignores it.
const DefaultBaud = 19200

// reopenEvery is how often ServeSerial looks for a device that went away.
const reopenEvery = 100 * time.Millisecond

// OpenSerial opens the serial device at path raw, 8N1 at baud (0 is
// DefaultBaud), and discards any input already waiting in it, as a printer
// coming on has an empty buffer.
func OpenSerial(path string, baud int) (serial.Port, error) {
	if baud <= 0 {
		baud = DefaultBaud
	}
	port, err := serial.Open(path, &serial.Mode{BaudRate: baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		return nil, fmt.Errorf("open serial device %s: %w", path, err)
	}
	if err := port.ResetInputBuffer(); err != nil {
		port.Close()
		return nil, fmt.Errorf("serial device %s: discard stale input: %w", path, err)
	}
	return port, nil
}

// ServeSerial is the printer at the end of a serial line: it serves the
// device at path (a tty such as /dev/ttyUSB0, or one end of a socat pty
// pair) with ServeConn until the printer is closed, and returns nil then.
//
// The device must open the first time, or ServeSerial returns the error.
// After that, whenever the stream ends (the device went away, or the drop
// fault closed it) ServeSerial opens the path again as soon as it is there:
// a printer unplugged and plugged back in. While the printer is down it
// keeps the device closed (closing it if it goes down while open), so the
// line is silent. Every open discards the input waiting in the device.
func (p *Printer) ServeSerial(path string, baud int) error {
	first := true
	for {
		p.mu.Lock()
		closed, down, changed := p.isClosed, p.fault == FaultDown, p.faultCh
		p.mu.Unlock()
		if closed {
			if first {
				return ErrClosed
			}
			return nil
		}
		if down {
			p.log.Info("down: serial device kept closed", "path", path)
			select {
			case <-changed:
			case <-p.closed:
			}
			continue
		}
		port, err := OpenSerial(path, baud)
		if err != nil {
			if first {
				return fmt.Errorf("printersim: %w", err)
			}
			t := time.NewTimer(reopenEvery)
			select {
			case <-t.C:
			case <-p.closed:
				t.Stop()
			}
			continue
		}
		if !first {
			p.log.Info("serial device open again", "path", path)
		}
		first = false
		stop := make(chan struct{})
		go p.closeWhenDown(port, stop)
		p.ServeConn(port)
		close(stop)
	}
}

// closeWhenDown closes port once the printer is down (switched off), until
// stop is closed.
func (p *Printer) closeWhenDown(port serial.Port, stop <-chan struct{}) {
	for {
		p.mu.Lock()
		down, changed := p.fault == FaultDown, p.faultCh
		p.mu.Unlock()
		if down {
			port.Close() // ServeConn sees the stream end
			return
		}
		select {
		case <-changed:
		case <-stop:
			return
		case <-p.closed:
			return
		}
	}
}
