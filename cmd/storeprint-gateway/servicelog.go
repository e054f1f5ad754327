package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/kardianos/service"
)

// serviceLogHandler sends each log record to a service manager's logger
// (the Windows Event Log), at the record's level.
type serviceLogHandler struct {
	h    slog.Handler // formats into buf
	buf  *bytes.Buffer
	mu   *sync.Mutex
	log  service.Logger
	json bool
}

func newServiceLogHandler(l service.Logger, json bool) *serviceLogHandler {
	buf := &bytes.Buffer{}
	var h slog.Handler = slog.NewTextHandler(buf, nil)
	if json {
		h = slog.NewJSONHandler(buf, nil)
	}
	return &serviceLogHandler{h: h, buf: buf, mu: &sync.Mutex{}, log: l, json: json}
}

func (s *serviceLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return s.h.Enabled(ctx, l)
}

func (s *serviceLogHandler) Handle(ctx context.Context, r slog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Reset()
	if err := s.h.Handle(ctx, r); err != nil {
		return err
	}
	line := strings.TrimSpace(s.buf.String())
	switch {
	case r.Level >= slog.LevelError:
		return s.log.Error(line)
	case r.Level >= slog.LevelWarn:
		return s.log.Warning(line)
	}
	return s.log.Info(line)
}

func (s *serviceLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &serviceLogHandler{h: s.h.WithAttrs(attrs), buf: s.buf, mu: s.mu, log: s.log, json: s.json}
}

func (s *serviceLogHandler) WithGroup(name string) slog.Handler {
	return &serviceLogHandler{h: s.h.WithGroup(name), buf: s.buf, mu: s.mu, log: s.log, json: s.json}
}
