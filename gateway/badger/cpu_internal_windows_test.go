package badger

import "time"

// processCPU is not read on Windows: the benchmarks report no CPU there.
func processCPU() time.Duration { return 0 }

// ProcessCPU is processCPU for the external tests.
var ProcessCPU = processCPU
