//go:build !unix

package sqlite_test

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
