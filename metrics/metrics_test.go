package metrics_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/metrics"
)

// TestObserveSIPLabels: a SIP label that is not a two-digit code, invalid UTF-8
// included, is counted as "other": Prometheus panics on a label that is not text,
// and arbitrary labels would grow the metrics without bound (issue 13, finding 8).
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
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mf := range mfs {
		if mf.GetName() != "stacks_sip_message_duration_seconds" {
			continue
		}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				got = append(got, l.GetValue())
			}
		}
	}
	slices.Sort(got)
	if want := []string{"93", "other"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}
