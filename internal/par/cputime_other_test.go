//go:build !unix

package par

import "time"

// processCPU is not measured off Unix: the benchmark reports zero CPU time there.
func processCPU() time.Duration { return 0 }
