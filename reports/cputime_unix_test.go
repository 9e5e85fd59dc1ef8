//go:build unix

package reports_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the test process has used: on a
// shared, loaded machine a report's CPU time says what it costs better than the
// time on the clock, which includes waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
