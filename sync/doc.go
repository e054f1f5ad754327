// Package sync is the websocket protocol between a store's gateway and the
// cloud: versioned frames, the events a gateway replays upstream in seq
// order, the commands the cloud sends downstream, and the client and server
// halves of the link.
package sync
