// Package authlimit counts failed authentication per client address and
// says when an address must wait (HTTP 429 with Retry-After). Both HTTP
// servers use it: the gateway for bad tokens and wrong pairing codes, the
// cloud for bad tokens.
package authlimit
