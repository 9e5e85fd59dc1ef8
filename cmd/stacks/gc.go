package main

import (
	"os"
	"runtime/debug"
)

// Garbage collector settings for the long-running commands (serve, load). A
// desk request allocates a few tens of kilobytes and keeps almost none of it, so
// with Go's default (GOGC=100: collect when the heap doubles) the server spends
// about a tenth of its CPU collecting under load. serverGCPercent lets the heap
// grow to five times what is live before collecting (+17 % check-outs and
// check-ins a second at saturation, measured side by side); serverMemoryLimit
// makes the collector work harder instead of growing past it, so memory stays
// bounded whatever the load. GOGC and GOMEMLIMIT, Go's own variables, override
// either.
const (
	serverGCPercent   = 400
	serverMemoryLimit = 120 << 20
)

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serverMemoryLimit)
	}
}
