package epos

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Request is a print request as the printer reads it: the job id from
// the SOAP header and what the <epos-print> document puts on paper.
type Request struct {
	PrintJobID string
	// Empty: the document has no element at all: a status query, or
	// with a PrintJobID the query of that job's status.
	Empty bool
	// Tickets holds the text lines of each part that ends in a <cut>;
	// Tail the lines printed after the last cut.
	Tickets [][]string
	Tail    []string
}

// MaxRequest bounds the size of a request document.
const MaxRequest = 1 << 20

// ErrSchema is ParseRequest's error for a document the printer cannot
// read: it answers it with CodeSchemaError.
var ErrSchema = errors.New("epos: not an ePOS-Print request")

// printElements are the <epos-print> children ParseRequest accepts;
// those other than text, feed and cut put nothing it reads on paper.
var printElements = map[string]bool{
	"text": true, "feed": true, "cut": true, "image": true, "logo": true, "barcode": true,
	"symbol": true, "hline": true, "vline-begin": true, "vline-end": true, "page": true,
	"area": true, "direction": true, "position": true, "line": true, "rectangle": true,
	"pulse": true, "sound": true, "command": true, "layout": true, "recovery": true, "reset": true,
}

// ParseRequest reads a request body: a SOAP envelope holding an
// <epos-print> document (and maybe a printjobid in its header), or a bare
// <epos-print>. Errors wrap ErrSchema.
func ParseRequest(body []byte) (*Request, error) {
	if len(body) > MaxRequest {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrSchema, MaxRequest)
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	req := &Request{Empty: true}
	var stack []string   // open elements, outside <epos-print> and inside it
	inDoc, docs := -1, 0 // depth of <epos-print>, or -1
	var line strings.Builder
	var lines []string
	endLine := func() {
		lines = append(lines, line.String())
		line.Reset()
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrSchema, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			name := tok.Name.Local
			switch {
			case inDoc < 0 && name == "epos-print":
				if tok.Name.Space != Namespace {
					return nil, fmt.Errorf("%w: <epos-print> in namespace %q, not %q", ErrSchema, tok.Name.Space, Namespace)
				}
				docs++
				inDoc = len(stack)
			case inDoc >= 0 && len(stack) == inDoc+1:
				if !printElements[name] {
					return nil, fmt.Errorf("%w: unknown element <%s>", ErrSchema, name)
				}
				req.Empty = false
				switch name {
				case "feed":
					n := 1
					for _, a := range tok.Attr {
						if a.Name.Local == "line" {
							v, err := strconv.Atoi(a.Value)
							if err != nil || v < 0 || v > 255 {
								return nil, fmt.Errorf("%w: feed line %q", ErrSchema, a.Value)
							}
							n = v
						}
					}
					for range n {
						endLine()
					}
				case "cut":
					if line.Len() > 0 {
						endLine()
					}
					req.Tickets = append(req.Tickets, lines)
					lines = nil
				}
			}
			stack = append(stack, name)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if inDoc >= 0 && len(stack) == inDoc {
				inDoc = -1
			}
		case xml.CharData:
			switch {
			case len(stack) > 0 && stack[len(stack)-1] == "printjobid" && inDoc < 0:
				req.PrintJobID += strings.TrimSpace(string(tok))
			case inDoc >= 0 && len(stack) == inDoc+2 && stack[len(stack)-1] == "text":
				for i, part := range strings.Split(string(tok), "\n") {
					if i > 0 {
						endLine()
					}
					line.WriteString(part)
				}
			}
		}
	}
	if docs != 1 {
		return nil, fmt.Errorf("%w: %d <epos-print> documents, want one", ErrSchema, docs)
	}
	if line.Len() > 0 {
		endLine()
	}
	req.Tail = lines
	return req, nil
}

// ResponseDocument is the SOAP envelope of a response: devid and, when
// not empty, printJobID in its header, the <response> in its body.
func ResponseDocument(devID, printJobID string, r Response) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>`)
	fmt.Fprintf(&b, `<s:Envelope xmlns:s="%s"><s:Header><parameter xmlns="%s"><devid>`, SOAPNamespace, Namespace)
	_ = xml.EscapeText(&b, []byte(devID))
	b.WriteString("</devid>")
	if printJobID != "" {
		b.WriteString("<printjobid>")
		_ = xml.EscapeText(&b, []byte(printJobID))
		b.WriteString("</printjobid>")
	}
	fmt.Fprintf(&b, `</parameter></s:Header><s:Body><response success="%t" code="`, r.Success)
	_ = xml.EscapeText(&b, []byte(r.Code))
	fmt.Fprintf(&b, `" status="%d" battery="%d" xmlns="%s"/></s:Body></s:Envelope>`, r.Status, r.Battery, Namespace)
	return b.Bytes()
}
