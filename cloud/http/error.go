package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/storeprint/storeprint"
)

// writeError answers {"error": message}. An unexpected error is logged and
// answered as "internal error".
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := storeprint.ErrorCode(err)
	status := storeprint.HTTPStatus(code)
	if code == storeprint.EINTERNAL || code == storeprint.EUNAVAILABLE {
		s.Logger.Error("request failed", append([]any{"method", r.Method, "path", r.URL.Path, "err", err}, idAttrs(r)...)...)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="storeprint"`)
	}
	writeJSON(w, status, map[string]string{"error": storeprint.ErrorMessage(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away: nothing to do
}

// decode reads one JSON object of at most storeprint.MaxRequestLen bytes into
// v, refusing unknown fields and trailing data. optional allows an empty
// body (v keeps its zero value).
func decode(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, storeprint.MaxRequestLen))
	if err != nil {
		if tooLarge(err) {
			return errTooLarge()
		}
		return storeprint.Errorf(storeprint.EINVALID, "read request body: %v", err)
	}
	if err := storeprint.CheckBodyUTF8(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			if tooLarge(err) {
				return errTooLarge()
			}
			return storeprint.Errorf(storeprint.EINVALID, "malformed JSON: unexpected data after the object")
		}
		return nil
	}
	var (
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case tooLarge(err):
		return errTooLarge()
	case errors.Is(err, io.EOF):
		if optional {
			return nil
		}
		return storeprint.Errorf(storeprint.EINVALID, "request body is empty: a JSON object is required")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return storeprint.Errorf(storeprint.EINVALID, "malformed JSON: unexpected end of the body")
	case errors.As(err, &syntaxErr):
		return storeprint.Errorf(storeprint.EINVALID, "malformed JSON at byte %d: %s", syntaxErr.Offset, syntaxErr.Error())
	case errors.As(err, &typeErr):
		return storeprint.Errorf(storeprint.EINVALID, "%s", storeprint.TypeError(b, typeErr).Error())
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return storeprint.Errorf(storeprint.EINVALID, "%s", storeprint.UnknownField(b, err).Error())
	}
	return storeprint.Errorf(storeprint.EINVALID, "malformed JSON: %v", err)
}

func tooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}

func errTooLarge() error {
	return storeprint.Errorf(storeprint.ETOOLARGE, "request body is larger than %d bytes (%s)", storeprint.MaxRequestLen, fmt.Sprintf("%d MiB", storeprint.MaxRequestLen>>20))
}
