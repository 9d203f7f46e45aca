//go:build !unix

package mcp

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
