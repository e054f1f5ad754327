//go:build !failpoints

package main

// failpointFromEnv is inert in production builds.
func failpointFromEnv() func(string) { return nil }
