package badger

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/storeprint/storeprint"
	"github.com/storeprint/storeprint/gateway"
)

// A receipt is written at each step of an attempt (prepared, submitted,
// printed), three or more a ticket: as JSON about 390 bytes. The store
// keeps it compact, field by field in the order of gateway.Receipt, and
// reads it back as its JSON would read:
//
//	5 | flags | task no | attempt | state | printer id | payload digest |
//	process id | job id | backup from | error | settled | confirmed by |
//	prepared at | submitted at | printed at | confirmed at
//
// with strings, numbers and times as in compact events (see
// compactEventVersion). Flags: 1 the digest is 64 lowercase hex digits
// kept as its 32 bytes, 2 reprint. A receipt with a time or a string its
// JSON would not read back as itself stays JSON (formatVersion), as do
// receipts written by earlier releases.
const compactReceiptVersion byte = 5

// appendCompactReceipt appends the compact form of a receipt, or reports
// that it needs JSON.
func appendCompactReceipt(b []byte, r *gateway.Receipt) ([]byte, bool) {
	times := []time.Time{r.PreparedAt}
	for _, t := range []*time.Time{r.SubmittedAt, r.PrintedAt, r.ConfirmedAt} {
		if t != nil {
			times = append(times, *t)
		}
	}
	strs := []string{r.TaskNo, string(r.State), r.PrinterID, r.PayloadSHA256, r.ProcessID, r.JobID, r.BackupFrom, r.Error, r.Settled, string(r.ConfirmedBy)}
	if !compactTime(times...) || !validUTF8(strs...) {
		return b, false
	}
	flags := byte(0)
	digest := r.PayloadSHA256
	if d, ok := hexDigest(digest); ok {
		flags |= receiptHexDigest
		digest = d
	}
	if r.Reprint {
		flags |= receiptReprint
	}
	b = append(b, compactReceiptVersion, flags)
	b = appendString(b, r.TaskNo)
	b = binary.AppendVarint(b, int64(r.Attempt))
	for _, s := range []string{string(r.State), r.PrinterID, digest, r.ProcessID, r.JobID, r.BackupFrom, r.Error, r.Settled, string(r.ConfirmedBy)} {
		b = appendString(b, s)
	}
	b = appendTime(b, r.PreparedAt)
	b = appendOptTime(b, r.SubmittedAt)
	b = appendOptTime(b, r.PrintedAt)
	return appendOptTime(b, r.ConfirmedAt), true
}

// decodeReceipt reads a stored receipt, compact or JSON, into r.
func decodeReceipt(b []byte, r *gateway.Receipt) error {
	if len(b) == 0 || b[0] != compactReceiptVersion {
		return decode(b, r)
	}
	if len(b) < 2 {
		return fmt.Errorf("decode receipt: malformed")
	}
	flags := b[1]
	cr := &compactReader{b: b[2:], ok: true}
	*r = gateway.Receipt{TaskNo: cr.string(), Attempt: int(cr.varint()), State: storeprint.ReceiptState(cr.string()),
		PrinterID: cr.string(), PayloadSHA256: cr.string(), ProcessID: cr.string(), JobID: cr.string(),
		Reprint: flags&receiptReprint != 0, BackupFrom: cr.string(), Error: cr.string(), Settled: cr.string(),
		ConfirmedBy: storeprint.Confirm(cr.string()), PreparedAt: cr.time(), SubmittedAt: cr.optTime(),
		PrintedAt: cr.optTime(), ConfirmedAt: cr.optTime()}
	if flags&receiptHexDigest != 0 {
		r.PayloadSHA256 = hex.EncodeToString([]byte(r.PayloadSHA256))
	}
	if !cr.ok || len(cr.b) != 0 {
		return fmt.Errorf("decode receipt: malformed")
	}
	return nil
}
