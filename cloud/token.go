package cloud

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/storeprint/storeprint"
)

// Token prefixes. A token names the tenant or store it belongs to (so its
// row is found by a key that starts with tenant_id or store_id) followed by
// a 32-byte random secret; only its SHA-256 is stored.
const (
	TenantTokenPrefix  = "spt1."
	GatewayTokenPrefix = "spg1."
)

var b64 = base64.RawURLEncoding

// NewTenantToken returns a new tenant token and its public id.
func NewTenantToken(tenantID string) (token, tokenID string) {
	return TenantTokenPrefix + b64.EncodeToString([]byte(tenantID)) + "." + secret(), RandomID(8)
}

// NewGatewayToken returns a new gateway token for a gateway of a store.
func NewGatewayToken(storeID string) string {
	return GatewayTokenPrefix + b64.EncodeToString([]byte(storeID)) + "." + secret()
}

// ParseTenantToken returns the tenant a tenant token claims to belong to.
// The claim means nothing until the token's hash is found under it.
func ParseTenantToken(token string) (tenantID string, ok bool) {
	return parseToken(TenantTokenPrefix, token)
}

// ParseGatewayToken returns the store a gateway token claims to belong to.
func ParseGatewayToken(token string) (storeID string, ok bool) {
	return parseToken(GatewayTokenPrefix, token)
}

func parseToken(prefix, token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, prefix)
	if !ok {
		return "", false
	}
	owner, sec, ok := strings.Cut(rest, ".")
	if !ok || len(sec) != b64.EncodedLen(32) {
		return "", false
	}
	id, err := b64.DecodeString(owner)
	if err != nil || !storeprint.ValidID(string(id)) {
		return "", false
	}
	return string(id), true
}

// HashToken is how a token is stored and compared: its SHA-256.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// RandomID returns n random bytes in hex: gateway ids, audit ids, command ids.
func RandomID(n int) string { return storeprint.RandomHex(n) }

func secret() string { return b64.EncodeToString(storeprint.RandomBytes(32)) }
