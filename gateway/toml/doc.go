// Package toml reads the gateway's TOML configuration file.
package toml
