package badger

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// formatVersion is the first byte of every stored value. A later release
// reads older versions and migrates them when it writes them back.
const formatVersion byte = 1

// storeFormat is the data dir's format (m/format): a release refuses to
// open a data dir of a later format. 2: compact order records (retention)
// and the outbox seq kept with tasks and audit entries. 3: compact tasks,
// receipts and outbox events (compactTaskVersion, compactReceiptVersion,
// compactEventVersion).
const storeFormat byte = 3

func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode value: %w", err)
	}
	return append([]byte{formatVersion}, b...), nil
}

func decode(b []byte, v any) error {
	if len(b) == 0 {
		return fmt.Errorf("decode value: empty")
	}
	if b[0] != formatVersion {
		return fmt.Errorf("decode value: unknown format version %d", b[0])
	}
	if err := json.Unmarshal(b[1:], v); err != nil {
		return fmt.Errorf("decode value: %w", err)
	}
	return nil
}

func key(space byte, parts ...string) []byte {
	n := 2 + 9 // space and 0, and room for seqKey's 0 and seq
	for _, p := range parts {
		n += len(p) + 1
	}
	k := append(make([]byte, 0, n), space, 0)
	for i, p := range parts {
		if i > 0 {
			k = append(k, 0)
		}
		k = append(k, p...)
	}
	return k
}

// seqKey is key(space, parts...) + 0 + 8-byte big-endian seq; with no parts
// it is space, 0, seq.
func seqKey(space byte, seq uint64, parts ...string) []byte {
	k := key(space, parts...)
	if len(parts) > 0 {
		k = append(k, 0)
	}
	return binary.BigEndian.AppendUint64(k, seq)
}

func prefix(space byte, parts ...string) []byte {
	k := key(space, parts...)
	if len(parts) > 0 {
		k = append(k, 0)
	}
	return k
}

const (
	spaceTask     = 't'
	spaceOrder    = 'o'
	spaceQueue    = 'q'
	spaceStatus   = 's'
	spaceReceipt  = 'r'
	spaceAudit    = 'a'
	spaceEvent    = 'e'
	spaceFailover = 'f'
	spaceMeta     = 'm'
)

func receiptKey(taskNo string, attempt int) []byte {
	k := prefix(spaceReceipt, taskNo)
	return binary.BigEndian.AppendUint32(k, uint32(attempt))
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
