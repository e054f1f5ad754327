package badger

import (
	"fmt"
	"log/slog"
	"strings"
)

// badgerLogger sends Badger's log to slog, keeping its chatter at debug.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any) { b.l.Error("badger: " + trim(fmt.Sprintf(f, a...))) }
func (b badgerLogger) Warningf(f string, a ...any) {
	msg := trim(fmt.Sprintf(f, a...))
	for _, chatter := range []string{
		"Unable to fill tables",          // a compaction with nothing to do (Flatten tries every level)
		"Block cache might be too small", // the cache is small on purpose ([storage])
		"Cache life expectancy",
	} {
		if strings.Contains(msg, chatter) {
			b.l.Debug("badger: " + msg)
			return
		}
	}
	b.l.Warn("badger: " + msg)
}
func (b badgerLogger) Infof(f string, a ...any)  { b.l.Debug("badger: " + trim(fmt.Sprintf(f, a...))) }
func (b badgerLogger) Debugf(f string, a ...any) { b.l.Debug("badger: " + trim(fmt.Sprintf(f, a...))) }

func trim(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}
