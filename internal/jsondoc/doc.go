// Package jsondoc serves the fixed JSON documents the gateway's and the
// cloud's HTTP servers publish without a token: each server's OpenAPI
// document and the catalogue of words its pages say things in.
package jsondoc
