// Package cli runs a storeprint program's Main as the process: it
// stops the program on SIGINT or SIGTERM, reads its flags, runs it, closes
// it and turns the outcome into the exit status. The three commands under
// cmd/ share it, so they start and stop alike.
package cli
