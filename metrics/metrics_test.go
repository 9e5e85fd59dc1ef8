package metrics_test

import (
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/metrics"
)

// TestObserveSIPLabels: a SIP label that is not a two-digit code, invalid UTF-8
// included, is counted as "other": Prometheus panics on a label that is not text,
// and arbitrary labels would grow the metrics without bound.
func TestObserveSIPLabels(t *testing.T) {
	d, err := db.Open(filepath.Join(t.TempDir(), "stacks.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := metrics.New(d)
	for _, label := range []string{"93", "9\xC3", "\xff\xfe", "XX", "other", "", "999", "9"} {
		m.ObserveSIP(label, time.Millisecond, nil)
	}
	var got []string
	for _, s := range m.Series("stacks_sip_message_duration_seconds") {
		got = append(got, s.Labels["message"])
	}
	slices.Sort(got)
	if want := []string{"93", "other"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

// TestExposition: /metrics is the Prometheus text format as Prometheus's own
// parser reads it (the parser is a test dependency only: the binary does not link
// the Prometheus libraries), with cumulative histogram buckets, escaped
// label values and the runtime, process and pool families.
func TestExposition(t *testing.T) {
	d, err := db.Open(filepath.Join(t.TempDir(), "stacks.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := metrics.New(d)
	m.ObserveRequest("/a", "GET", 200, 300*time.Microsecond, nil)
	m.ObserveRequest("/a", "GET", 200, 3*time.Millisecond, nil)
	m.ObserveRequest("/a", "GET", 200, time.Minute, nil)
	m.ObserveRequest("/q\"\\\n\xff", "GET", 404, time.Millisecond, nil)
	m.Circulation("checkout", "desk")
	m.Circulation("checkout", "desk")

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, rec.Body.String())
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "stacks_db_pool_open_connections", "stacks_sql_statement_cache_hits_total"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	if c := fams["stacks_circulation_total"].GetMetric()[0].GetCounter().GetValue(); c != 2 {
		t.Errorf("checkouts %v, want 2", c)
	}
	var h *dto.Histogram
	var odd string
	for _, s := range fams["stacks_http_request_duration_seconds"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "route" && l.GetValue() == "/a" {
				h = s.GetHistogram()
			} else if l.GetName() == "route" {
				odd = l.GetValue()
			}
		}
	}
	if h == nil || h.GetSampleCount() != 3 || h.GetSampleSum() < 60 {
		t.Fatalf("GET /a histogram %v, want 3 observations summing to over a minute", h)
	}
	want := map[float64]uint64{.0005: 1, .002: 1, .005: 2, 5: 2}
	for _, b := range h.GetBucket() {
		if n, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != n {
			t.Errorf("bucket le=%v: %d, want %d (cumulative)", b.GetUpperBound(), b.GetCumulativeCount(), n)
		}
	}
	if odd != "/q\"\\\n\uFFFD" {
		t.Errorf("escaped route label read back as %q", odd)
	}
}
