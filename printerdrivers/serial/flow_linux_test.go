package serial

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/storeprint/storeprint/printerdrivers/printertest"
)

func TestSetFlow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flow      string
		crtscts   bool
		ixonIxoff bool
	}{
		{"rtscts", true, false},
		{"xonxoff", false, true},
		{"none", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.flow, func(t *testing.T) {
			t.Parallel()
			line := printertest.NewPTYPair(t)
			fd, err := unix.Open(line.B, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			// Start from the opposite, so that every flag is set by setFlow.
			if err := setFlow(fd, map[bool]string{true: "xonxoff", false: "rtscts"}[tt.crtscts]); err != nil {
				t.Fatal(err)
			}
			if err := setFlow(fd, tt.flow); err != nil {
				t.Fatalf("setFlow: %v", err)
			}
			got, err := unix.IoctlGetTermios(fd, unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if c := got.Cflag&unix.CRTSCTS != 0; c != tt.crtscts {
				t.Errorf("got CRTSCTS %v, want %v", c, tt.crtscts)
			}
			if x := got.Iflag&(unix.IXON|unix.IXOFF) == unix.IXON|unix.IXOFF; x != tt.ixonIxoff {
				t.Errorf("got IXON and IXOFF %v, want %v", x, tt.ixonIxoff)
			}
			if !tt.ixonIxoff && got.Iflag&(unix.IXON|unix.IXOFF|unix.IXANY) != 0 {
				t.Errorf("got input flow flags %#x, want none", got.Iflag&(unix.IXON|unix.IXOFF|unix.IXANY))
			}
		})
	}
	t.Run("ErrUnknown", func(t *testing.T) {
		t.Parallel()
		line := printertest.NewPTYPair(t)
		fd, err := unix.Open(line.B, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := setFlow(fd, "dtrdsr"); err == nil {
			t.Fatal("got nil, want an error for an unknown flow")
		}
	})
}
