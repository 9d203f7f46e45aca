//go:build !unix

package warrant_test

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
