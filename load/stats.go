package load

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Summary is the statistics of one operation over a run, in the shape of FOLIO's
// CICO reports: how many, how long (average, median, 95th and 99th percentile,
// longest), how many failed, and how many a second.
//
// Latencies are of the successful transactions only; failed ones are counted in
// Errors (a refused or broken request often returns faster or slower than a real
// one, and would blur the figure people compare).
type Summary struct {
	Count  int           // successful transactions
	Errors int           // failed transactions
	Avg    time.Duration // mean
	Median time.Duration // the middle value; the mean of the two middle values for an even count
	P95    time.Duration // nearest-rank 95th percentile
	P99    time.Duration // nearest-rank 99th percentile
	Max    time.Duration
	// TPS is successful transactions a second over the run's measured time.
	TPS float64
	// ServerMedian is the median of the server's own time per transaction (the
	// sum of Server-Timing app over the transaction's requests); ServerKnown is
	// false when the server sends none (SIP2).
	ServerMedian time.Duration
	ServerKnown  bool
}

// Median returns the median of d: the middle value, or the mean of the two
// middle values when len(d) is even; 0 for no values. d need not be sorted.
func Median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := sorted(d)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentileSorted returns the p-th percentile of s (0 < p <= 100, s sorted) by
// the nearest-rank method: the smallest value that at least p% of the values do
// not exceed, which is always one of the measured values. 0 for no values.
func percentileSorted(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

func sorted(d []time.Duration) []time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s
}

// Summarize computes the statistics of latencies (successful transactions),
// errors and the server's times over elapsed.
func Summarize(latencies []time.Duration, errors int, server []time.Duration, elapsed time.Duration) Summary {
	s := Summary{Count: len(latencies), Errors: errors, ServerKnown: len(server) > 0}
	if len(latencies) > 0 {
		sl := sorted(latencies)
		var sum time.Duration
		for _, d := range sl {
			sum += d
		}
		s.Avg = sum / time.Duration(len(sl))
		s.Median = Median(sl)
		s.P95 = percentileSorted(sl, 95)
		s.P99 = percentileSorted(sl, 99)
		s.Max = sl[len(sl)-1]
	}
	s.TPS = Rate(len(latencies), elapsed)
	if s.ServerKnown {
		s.ServerMedian = Median(server)
	}
	return s
}

// Rate is n events a second over elapsed (0 when elapsed is not positive).
func Rate(n int, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(n) / elapsed.Seconds()
}

// recorder collects one operation's transactions from many goroutines.
type recorder struct {
	mu        sync.Mutex
	latencies []time.Duration
	server    []time.Duration
	errors    int
	errorSeen map[string]int
}

// maxErrorKinds bounds how many distinct error messages a run keeps.
const maxErrorKinds = 20

func (r *recorder) ok(wall, server time.Duration, serverKnown bool) {
	r.mu.Lock()
	r.latencies = append(r.latencies, wall)
	if serverKnown {
		r.server = append(r.server, server)
	}
	r.mu.Unlock()
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	r.errors++
	if r.errorSeen == nil {
		r.errorSeen = map[string]int{}
	}
	msg := err.Error()
	if _, ok := r.errorSeen[msg]; ok || len(r.errorSeen) < maxErrorKinds {
		r.errorSeen[msg]++
	}
	r.mu.Unlock()
}

func (r *recorder) summary(elapsed time.Duration) Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Summarize(r.latencies, r.errors, r.server, elapsed)
}
