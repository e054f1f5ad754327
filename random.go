package storeprint

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
)

// RandomBytes returns n bytes from crypto/rand: tokens, secrets, ids that
// must not be guessed. It never fails: since Go 1.24 crypto/rand crashes
// the program rather than return an error, and its source does not fail
// on the systems storeprint runs on.
func RandomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never returns an error (see above)
	return b
}

// RandomHex returns n random bytes as 2n hex digits.
func RandomHex(n int) string { return hex.EncodeToString(RandomBytes(n)) }

// RandomDigits returns n random decimal digits, every one of the 10^n
// strings equally likely: pairing codes, process ids.
func RandomDigits(n int) string {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
	v, _ := rand.Int(rand.Reader, limit) // rand.Reader never returns an error (see RandomBytes)
	return fmt.Sprintf("%0*d", n, v)
}
