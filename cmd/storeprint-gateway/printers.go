package main

// The printer drivers built into the gateway: each registers itself with
// package printerdrivers, which opens a printer by its driver = "...".
import (
	_ "github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	_ "github.com/storeprint/storeprint/printerdrivers/epos"
	_ "github.com/storeprint/storeprint/printerdrivers/serial"
	_ "github.com/storeprint/storeprint/printerdrivers/tcp"
	_ "github.com/storeprint/storeprint/printerdrivers/winspool"
)
