package badger_test

import "time"

// processCPU is not read on Windows: the benchmarks report no CPU there.
func processCPU() time.Duration { return 0 }
