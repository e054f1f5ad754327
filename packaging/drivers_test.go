package packaging

// The drivers register their config keys, as in the programs, so that
// Config.Validate checks a printer's driver keys here too.
import (
	_ "github.com/storeprint/storeprint/printerdrivers/cloudprnt"
	_ "github.com/storeprint/storeprint/printerdrivers/epos"
	_ "github.com/storeprint/storeprint/printerdrivers/serial"
	_ "github.com/storeprint/storeprint/printerdrivers/tcp"
	_ "github.com/storeprint/storeprint/printerdrivers/winspool"
)
