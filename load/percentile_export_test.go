package load

import "time"

// Percentile is percentileSorted over unsorted d, for the tests of the
// nearest-rank method on its own.
func Percentile(d []time.Duration, p float64) time.Duration {
	return percentileSorted(sorted(d), p)
}
