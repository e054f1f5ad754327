package storeprint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckBodyUTF8 refuses a request body that is not valid UTF-8, naming
// the offset of its first bad byte: encoding/json would replace the byte
// with U+FFFD, and text is refused, not altered.
func CheckBodyUTF8(b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	return Errorf(EINVALID, "request body is not valid UTF-8 (at byte %d): text is refused, not altered", i)
}

// TypeError says in words which value of a JSON document has the wrong
// type, naming it by its path with indexes, as Validate does:
// "items[0].qty must be an integer, not a string". data is the document
// te came from (decoded from its first byte).
func TypeError(data []byte, te *json.UnmarshalTypeError) error {
	path := jsonPath(data, te.Offset)
	if path == "" {
		path = te.Field
	}
	want, got := typeWords(te.Type), valueWords(te.Value)
	if path == "" {
		if want == "an object" {
			want = "a JSON object"
		}
		return Invalidf("the body must be %s, not %s", want, got)
	}
	return Invalidf("%s must be %s, not %s", path, want, got)
}

// jsonPath returns the path (items[0].qty) of the value of data that ends
// at offset, where encoding/json reports a type error: after a literal,
// or after the opening bracket of an object or array. "" when none does.
func jsonPath(data []byte, offset int64) string {
	var found string
	walk(data, func(path string, key bool, end int64) bool {
		if !key && end == offset {
			found = path
			return false
		}
		return true
	})
	return found
}

// UnknownField says which member of a JSON document encoding/json refused
// as unknown (its error names the member, not where it is): the first
// member of that name, by its path, "items[0].price: unknown field
// \"price\"". err is returned as it is when it is not about an unknown
// field.
func UnknownField(data []byte, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return err
	}
	var found string
	if want, qerr := strconv.Unquote(name); qerr == nil {
		walk(data, func(path string, key bool, _ int64) bool {
			if key && (path == want || strings.HasSuffix(path, "."+want)) {
				found = path
				return false
			}
			return true
		})
	}
	if found == "" {
		return Invalidf("unknown field %s", name)
	}
	return Invalidf("%s: unknown field %s", found, name)
}

// walk visits data's tokens in order, each with its path: every member
// name (key true, the path ending in it) and every value (key false, with
// the offset where it ends, or where an object or array opens), until
// visit returns false or the document ends or breaks.
func walk(data []byte, visit func(path string, key bool, end int64) bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type level struct {
		array bool
		index int    // the next element's index, in an array
		key   string // the current member's name, in an object
		inKey bool   // an object's next token is a member name
	}
	var stack []level
	path := func() string {
		var b strings.Builder
		for _, l := range stack {
			if l.array {
				fmt.Fprintf(&b, "[%d]", l.index-1)
			} else if l.key != "" {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(l.key)
			}
		}
		return b.String()
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:top]
			if top > 0 && !stack[top-1].array {
				stack[top-1].inKey = true
			}
			continue
		}
		if top >= 0 && !stack[top].array && stack[top].inKey {
			stack[top].key, stack[top].inKey = tok.(string), false
			if !visit(path(), true, dec.InputOffset()) {
				return
			}
			continue
		}
		if top >= 0 && stack[top].array {
			stack[top].index++
		}
		if !visit(path(), false, dec.InputOffset()) {
			return
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, level{array: d == '[', inKey: d == '{'})
			continue
		}
		if top >= 0 && !stack[top].array {
			stack[top].inKey = true
		}
	}
}

// typeWords names a Go type as the JSON a client must send.
func typeWords(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return typeWords(t.Elem())
	}
	return t.String()
}

// valueWords names the JSON value encoding/json found ("string",
// "number 1.5", "array"...).
func valueWords(v string) string {
	switch v {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	return v
}
