package printerdrivers

import (
	"slices"
	"strings"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// ConfirmAuto is the confirm setting that finds out how a printer on a
// byte stream confirms: without paper, strongest first (confirm.go).
const ConfirmAuto = "auto"

// ConfirmMethods are the values of confirm.
var ConfirmMethods = []string{ConfirmAuto, string(storeprint.ConfirmProcessID), string(storeprint.ConfirmTransmitStatus), string(storeprint.ConfirmStatus)}

// Stream is the key every printer on a byte stream to an ESC/POS printer
// (tcp, serial) has: confirm, how the printer confirms a ticket. Those
// drivers' options embed it; the pipeline reads it from them.
type Stream struct {
	// Confirm is auto (the default: found out without paper, strongest
	// first), process_id (GS ( H), transmit_status (GS r 1) or status
	// (DLE EOT only, weaker).
	Confirm string `toml:"confirm"`
}

// streamer is the options of a driver on a byte stream: they embed
// Stream.
type streamer interface{ stream() Stream }

func (s Stream) stream() Stream { return s }

// StreamOf returns the stream keys of a printer's options, defaulted: of
// a Stream, or of options that embed one; other options get the
// defaults.
func StreamOf(o gateway.DriverOptions) Stream {
	var s Stream
	if st, ok := o.(streamer); ok {
		s = st.stream()
	}
	if s.Confirm == "" {
		s.Confirm = ConfirmAuto
	}
	return s
}

var _ gateway.DriverOptions = Stream{}

// WithDefaults returns s with confirm = "auto" unless set. A Stream alone
// is the options a test gives tcp or serial printers of any driver on a
// byte stream; the drivers take it as their own options with only
// confirm set.
func (s Stream) WithDefaults() gateway.DriverOptions { return StreamOf(s) }

// Validate checks confirm; key names the printer.
func (s Stream) Validate(key string, _ *gateway.PrinterConfig) error {
	if !slices.Contains(ConfirmMethods, s.Confirm) {
		return storeprint.Errorf(storeprint.EINVALID, "%s.confirm: %q is not one of %s", key, s.Confirm, strings.Join(ConfirmMethods, ", "))
	}
	return nil
}

var _ gateway.ConfirmsNoter = Stream{}

// NoteConfirms shows confirm ("auto") before the printer was first
// reached and said how it confirms.
func (s Stream) NoteConfirms(c storeprint.Confirm) (string, storeprint.Word) {
	if c == "" {
		return s.Confirm, ""
	}
	return "", ""
}
