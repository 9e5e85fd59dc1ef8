package load_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/load"
)

func msList(vs ...float64) []time.Duration {
	out := make([]time.Duration, len(vs))
	for i, v := range vs {
		out[i] = time.Duration(v * float64(time.Millisecond))
	}
	return out
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want time.Duration
	}{
		{"Empty", nil, 0},
		{"One", msList(7), 7 * time.Millisecond},
		{"Odd", msList(9, 1, 5), 5 * time.Millisecond},
		{"Even", msList(4, 1, 3, 2), 2500 * time.Microsecond},
		{"Repeated", msList(2, 2, 2, 9), 2 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := load.Median(tc.in); got != tc.want {
				t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	// 1 ms to 100 ms, shuffled: the nearest-rank p-th percentile is p ms.
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(hundred), func(i, j int) { hundred[i], hundred[j] = hundred[j], hundred[i] })
	for _, tc := range []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"P95Of100", hundred, 95, 95 * time.Millisecond},
		{"P99Of100", hundred, 99, 99 * time.Millisecond},
		{"P100Of100", hundred, 100, 100 * time.Millisecond},
		{"P1Of100", hundred, 1, 1 * time.Millisecond},
		// 10 values: rank ceil(9.5) = 10 and ceil(9.9) = 10, the largest.
		{"P95Of10", msList(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 95, 10 * time.Millisecond},
		{"P50Of10", msList(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 50, 5 * time.Millisecond},
		// 20 values: rank ceil(19) = 19.
		{"P95Of20", msList(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 95, 19 * time.Millisecond},
		{"One", msList(3), 99, 3 * time.Millisecond},
		{"Empty", nil, 95, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := load.Percentile(tc.in, tc.p); got != tc.want {
				t.Errorf("Percentile(p%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	t.Run("Known", func(t *testing.T) {
		lat := make([]time.Duration, 100)
		for i := range lat {
			lat[i] = time.Duration(100-i) * time.Millisecond
		}
		server := msList(1, 2, 3)
		s := load.Summarize(lat, 4, server, 20*time.Second)
		want := load.Summary{
			Count: 100, Errors: 4,
			Avg: 50500 * time.Microsecond, Median: 50500 * time.Microsecond,
			P95: 95 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond,
			TPS: 5, ServerMedian: 2 * time.Millisecond, ServerKnown: true,
		}
		if s != want {
			t.Errorf("Summarize =\n%+v\nwant\n%+v", s, want)
		}
	})
	t.Run("NoServerTiming", func(t *testing.T) {
		s := load.Summarize(msList(2, 4), 0, nil, 4*time.Second)
		if s.ServerKnown || s.ServerMedian != 0 || s.Avg != 3*time.Millisecond || s.TPS != 0.5 {
			t.Errorf("Summarize = %+v", s)
		}
	})
	t.Run("OnlyErrors", func(t *testing.T) {
		s := load.Summarize(nil, 3, nil, time.Second)
		if s != (load.Summary{Errors: 3}) {
			t.Errorf("Summarize = %+v", s)
		}
	})
	t.Run("DoesNotReorderInput", func(t *testing.T) {
		in := msList(3, 1, 2)
		load.Summarize(in, 0, nil, time.Second)
		load.Percentile(in, 50)
		if in[0] != 3*time.Millisecond || in[1] != time.Millisecond {
			t.Errorf("input reordered: %v", in)
		}
	})
}

func TestRate(t *testing.T) {
	if got := load.Rate(150, 30*time.Second); got != 5 {
		t.Errorf("Rate(150, 30s) = %v, want 5", got)
	}
	if got := load.Rate(10, 0); got != 0 {
		t.Errorf("Rate(10, 0) = %v, want 0", got)
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, target := range []string{
		"http://127.0.0.1:8080", "http://127.0.0.1", "http://127.4.5.6:80/", "http://localhost:8080",
		"http://LOCALHOST:1/x", "http://[::1]:8080", "http://[::ffff:127.0.0.1]:8080",
		"127.0.0.1:6001", "[::1]:6001", "localhost:6001",
	} {
		t.Run("Accepts "+target, func(t *testing.T) {
			if err := load.CheckLoopback(target); err != nil {
				t.Errorf("CheckLoopback(%q) = %v, want nil", target, err)
			}
		})
	}
	for _, target := range []string{
		"http://10.0.0.1:8080", "http://example.org", "http://example.org:8080/", "10.0.0.1:6001",
		"example.org:6001", "http://192.168.1.10", "http://[2001:db8::1]:80", "http://0.0.0.0:8080",
		"https://127.0.0.1:8443", ":8080", "http://:8080", "127.0.0.1", "http://localhost.example.org",
		"http://127.0.0.1.example.org/",
	} {
		t.Run("Refuses "+target, func(t *testing.T) {
			if err := load.CheckLoopback(target); err == nil {
				t.Errorf("CheckLoopback(%q) = nil, want an error", target)
			}
		})
	}
}
