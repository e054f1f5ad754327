package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/storeprint/storeprint"
)

func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := storeprint.ErrorCode(err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		code = storeprint.EUNAVAILABLE
		err = storeprint.Errorf(code, "request cancelled")
	}
	status := storeprint.HTTPStatus(code)
	if status == http.StatusInternalServerError {
		log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	writeJSON(w, status, map[string]string{"error": storeprint.ErrorMessage(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone; nothing to do
}

// decode reads a JSON body of at most MaxRequestLen bytes into v. An empty
// body is allowed when optional.
func decode(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	r.Body = http.MaxBytesReader(w, r.Body, storeprint.MaxRequestLen)
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return storeprint.Errorf(storeprint.ETOOLARGE, "request body is larger than %d bytes (1 MiB)", storeprint.MaxRequestLen)
		}
		return storeprint.Errorf(storeprint.EINVALID, "read request body: %v", err)
	}
	if err := storeprint.CheckBodyUTF8(b); err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return storeprint.Errorf(storeprint.EINVALID, "request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return storeprint.Errorf(storeprint.EINVALID, "%s", storeprint.TypeError(b, te).Error())
		}
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return storeprint.Errorf(storeprint.EINVALID, "%s", storeprint.UnknownField(b, err).Error())
		}
		return storeprint.Errorf(storeprint.EINVALID, "malformed JSON: %v", err)
	}
	if dec.More() {
		return storeprint.Errorf(storeprint.EINVALID, "malformed JSON: unexpected data after the object")
	}
	return nil
}
