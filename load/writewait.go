package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// WriteWait is where the servers' writes waited during the measured time, one
// stage of their group writers (db.WriteStages), read from each server's
// /metrics (stacks_db_write_stage_seconds) at the start and the end of the
// window and summed over the servers.
type WriteWait struct {
	Stage  string  `json:"stage"`
	Writes uint64  `json:"writes"`
	MeanMS float64 `json:"mean_ms"`
	// P95MS is the histogram bucket's upper bound under which 95 % of the
	// writes stayed (0 with no writes; -1 when more than 5 % took longer
	// than the last bound).
	P95MS float64 `json:"p95_at_most_ms"`
}

// WriteWaits is the report's line: each stage's mean and p95 bound.
type WriteWaits []WriteWait

func (ws WriteWaits) String() string {
	var parts []string
	for _, w := range ws {
		p95 := "over " + fmtMS(time.Duration(db.WriteStageBuckets[len(db.WriteStageBuckets)-1]*float64(time.Second)))
		if w.P95MS >= 0 {
			p95 = "≤ " + fmtMS(msDuration(w.P95MS))
		}
		parts = append(parts, fmt.Sprintf("%s mean %s, p95 %s", w.Stage, fmtMS(msDuration(w.MeanMS)), p95))
	}
	n := uint64(0)
	if len(ws) > 0 {
		n = ws[0].Writes
	}
	return fmt.Sprintf("%d writes; ms %s", n, strings.Join(parts, "; "))
}

// stageReading is one server's stage histograms: per stage, the cumulative
// bucket counts (one per db.WriteStageBuckets, then +Inf) and the sum.
type stageReading map[string]*stageCounts

type stageCounts struct {
	cum []float64
	sum float64
}

// WriteWatch reads the servers' write stages at the start and the end of a
// measured window.
type WriteWatch struct {
	targets []string
	client  *http.Client
	start   []stageReading
	err     error
}

// WatchWrites watches the servers at targets (base URLs). Their /metrics must
// be readable without signing in: serve with --metrics-allow 127.0.0.1.
func WatchWrites(targets []string) *WriteWatch {
	return &WriteWatch{targets: targets, client: &http.Client{Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Start takes the first reading.
func (w *WriteWatch) Start() { w.start, w.err = w.read() }

// Stop takes the second reading and returns the difference.
func (w *WriteWatch) Stop() (WriteWaits, error) {
	if w.err != nil {
		return nil, w.err
	}
	end, err := w.read()
	if err != nil {
		return nil, err
	}
	var out WriteWaits
	for _, stage := range db.WriteStageNames {
		cum := make([]float64, len(db.WriteStageBuckets)+1)
		var sum float64
		for i := range w.targets {
			a, b := w.start[i][stage], end[i][stage]
			if a == nil || b == nil {
				return nil, fmt.Errorf("%s/metrics has no stacks_db_write_stage_seconds for the %s stage", w.targets[i], stage)
			}
			for k := range cum {
				if b.cum[k] < a.cum[k] {
					return nil, fmt.Errorf("%s/metrics counts fewer writes at the end than at the start: the server restarted while measuring", w.targets[i])
				}
				cum[k] += b.cum[k] - a.cum[k]
			}
			sum += b.sum - a.sum
		}
		ww := WriteWait{Stage: stage, Writes: uint64(cum[len(cum)-1])}
		if ww.Writes > 0 {
			ww.MeanMS = sum / float64(ww.Writes) * 1000
			ww.P95MS = -1
			for k, le := range db.WriteStageBuckets {
				if cum[k] >= 0.95*float64(ww.Writes) {
					ww.P95MS = le * 1000
					break
				}
			}
		}
		out = append(out, ww)
	}
	return out, nil
}

func (w *WriteWatch) read() ([]stageReading, error) {
	out := make([]stageReading, len(w.targets))
	for i, t := range w.targets {
		r, err := w.readOne(strings.TrimSuffix(t, "/") + "/metrics")
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

func (w *WriteWatch) readOne(url string) (stageReading, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		return nil, fmt.Errorf("GET %s: %s (serve with --metrics-allow 127.0.0.1 to let the load command read it)", url, resp.Status)
	}
	return parseWriteStages(resp.Body)
}

const writeStageMetric = "stacks_db_write_stage_seconds"

// parseWriteStages reads the write stage histograms out of the Prometheus
// text format.
func parseWriteStages(r io.Reader) (stageReading, error) {
	out := stageReading{}
	bounds := make([]string, 0, len(db.WriteStageBuckets)+1)
	for _, le := range db.WriteStageBuckets {
		bounds = append(bounds, strconv.FormatFloat(le, 'g', -1, 64))
	}
	bounds = append(bounds, "+Inf")
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, writeStageMetric+"_") {
			continue
		}
		name, rest, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: %q: %v", line, err)
		}
		stage, le := labelValue(labels, "stage"), labelValue(labels, "le")
		c := out[stage]
		if c == nil {
			c = &stageCounts{cum: make([]float64, len(bounds))}
			out[stage] = c
		}
		switch strings.TrimPrefix(name, writeStageMetric) {
		case "_bucket":
			if k := slices.Index(bounds, le); k >= 0 {
				c.cum[k] = v
			}
		case "_sum":
			c.sum = v
		}
	}
	return out, sc.Err()
}

// labelValue is the value of label name in a Prometheus label list
// (name="value",...); the values here never hold quotes or commas.
func labelValue(labels, name string) string {
	for _, l := range strings.Split(labels, ",") {
		if k, v, ok := strings.Cut(l, "="); ok && k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
