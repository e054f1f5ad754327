// Package openapitest checks HTTP exchanges against an OpenAPI document:
// a test's HTTP client goes through Checker.Transport, and every request
// and answer is validated with kin-openapi's openapi3filter (JSON Schema
// 2020-12 for an OpenAPI 3.1 document). An exchange the document does not
// describe fails the request with an error naming what differs.
package openapitest
