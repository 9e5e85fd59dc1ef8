package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: the server's collector settings apply unless GOGC or GOMEMLIMIT
// say otherwise.
func TestTuneGC(t *testing.T) {
	restore := func(pct int, limit int64) {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
	defer restore(debug.SetGCPercent(100), debug.SetMemoryLimit(-1))

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	restore(100, 1<<62)
	tuneGC()
	if pct := debug.SetGCPercent(100); pct != serverGCPercent {
		t.Errorf("GC percent %d, want %d", pct, serverGCPercent)
	}
	if limit := debug.SetMemoryLimit(-1); limit != serverMemoryLimit {
		t.Errorf("memory limit %d, want %d", limit, serverMemoryLimit)
	}

	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	restore(150, 1<<30)
	tuneGC()
	if pct := debug.SetGCPercent(100); pct != 150 {
		t.Errorf("with GOGC=150: GC percent %d", pct)
	}
	if limit := debug.SetMemoryLimit(-1); limit != 1<<30 {
		t.Errorf("with GOMEMLIMIT=1GiB: memory limit %d", limit)
	}
}
