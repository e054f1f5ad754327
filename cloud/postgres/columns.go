package postgres

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// A batch goes to PostgreSQL as columns, arrays of up to a batch's rows
// each, through unnest. pgx encodes an array element by element through
// interfaces, boxing each one: at chain scale that was a tenth of a
// node's CPU. The column types below are written in PostgreSQL's binary
// array format directly, each element as pgx writes it.
type (
	textColumn []string
	int8Column []int64
	int4Column []int32
	timeColumn []time.Time
)

// registerColumns makes a connection's type map write the column types
// directly; every other value of those array types goes through the codec
// as before.
func registerColumns(m *pgtype.Map) {
	for _, oid := range []uint32{pgtype.TextArrayOID, pgtype.Int8ArrayOID, pgtype.Int4ArrayOID, pgtype.TimestamptzArrayOID} {
		t, ok := m.TypeForOID(oid)
		if !ok {
			continue
		}
		m.RegisterType(&pgtype.Type{Name: t.Name, OID: t.OID, Codec: columnCodec{t.Codec}})
	}
}

type columnCodec struct{ pgtype.Codec }

func (c columnCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if format == pgtype.BinaryFormatCode && columnOID(value) == oid {
		return columnPlan{}
	}
	return c.Codec.PlanEncode(m, oid, format, value)
}

// columnOID is the array type a column type is written as (0: none).
func columnOID(value any) uint32 {
	switch value.(type) {
	case textColumn:
		return pgtype.TextArrayOID
	case int8Column:
		return pgtype.Int8ArrayOID
	case int4Column:
		return pgtype.Int4ArrayOID
	case timeColumn:
		return pgtype.TimestamptzArrayOID
	}
	return 0
}

type columnPlan struct{}

func (columnPlan) Encode(value any, buf []byte) ([]byte, error) {
	switch v := value.(type) {
	case textColumn:
		buf = arrayHeader(buf, pgtype.TextOID, len(v))
		for _, s := range v {
			// PostgreSQL checks the encoding of what it receives.
			if len(s) > math.MaxInt32 {
				return nil, fmt.Errorf("a text of %d bytes is too long", len(s))
			}
			buf = binary.BigEndian.AppendUint32(buf, uint32(len(s)))
			buf = append(buf, s...)
		}
	case int8Column:
		buf = arrayHeader(buf, pgtype.Int8OID, len(v))
		for _, n := range v {
			buf = binary.BigEndian.AppendUint32(buf, 8)
			buf = binary.BigEndian.AppendUint64(buf, uint64(n))
		}
	case int4Column:
		buf = arrayHeader(buf, pgtype.Int4OID, len(v))
		for _, n := range v {
			buf = binary.BigEndian.AppendUint32(buf, 4)
			buf = binary.BigEndian.AppendUint32(buf, uint32(n))
		}
	case timeColumn:
		buf = arrayHeader(buf, pgtype.TimestamptzOID, len(v))
		for _, t := range v {
			buf = binary.BigEndian.AppendUint32(buf, 8)
			buf = binary.BigEndian.AppendUint64(buf, uint64(microsSinceY2K(t)))
		}
	default:
		return nil, fmt.Errorf("cannot write %T as a column", value)
	}
	return buf, nil
}

// arrayHeader writes the header of a one-dimensional array without NULLs
// of n elements of the type elem (an empty array has no dimension).
func arrayHeader(buf []byte, elem uint32, n int) []byte {
	if n == 0 {
		buf = binary.BigEndian.AppendUint32(buf, 0) // dimensions
		buf = binary.BigEndian.AppendUint32(buf, 0) // no NULLs
		return binary.BigEndian.AppendUint32(buf, elem)
	}
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint32(buf, 0)
	buf = binary.BigEndian.AppendUint32(buf, elem)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return binary.BigEndian.AppendUint32(buf, 1) // the lower bound
}

// microsSinceY2K is a time as PostgreSQL's timestamptz holds it:
// microseconds since 2000-01-01 UTC, truncated as pgx truncates.
func microsSinceY2K(t time.Time) int64 {
	const unixToY2K = 946684800 * 1000000
	return t.Unix()*1000000 + int64(t.Nanosecond())/1000 - unixToY2K
}
