package web_test

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/reports"
)

// TestReportPages: every standard report renders with its defaults (a table or
// "nothing to report", a chart as inline SVG, no script), its CSV downloads as an
// attachment that reads back with the page's columns, and a bad filter is a 422
// with the message beside the field.
func TestReportPages(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	if r := e.get(t, c, "/reports"); r.Status != http.StatusOK || !strings.Contains(r.Body, "Most borrowed titles") {
		t.Fatalf("/reports: %d", r.Status)
	}
	if r := e.get(t, c, "/"); !strings.Contains(r.Body, `href="/reports"`) {
		t.Error("the navigation has no Reports link")
	}
	for _, d := range reports.Definitions {
		t.Run(d.Slug, func(t *testing.T) {
			r := e.get(t, c, "/reports/"+d.Slug)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if !strings.Contains(r.Body, "<table") && !strings.Contains(r.Body, "Nothing to report") {
				t.Error("no table")
			}
			if hasInlineScript(r.Body) {
				t.Error("inline script")
			}
			if d.Slug == "collection" && !strings.Contains(r.Body, "<svg") {
				t.Error("no chart")
			}
			cr := e.get(t, c, "/reports/"+d.Slug+"/csv")
			if cr.Status != http.StatusOK {
				t.Fatalf("csv: %d %s", cr.Status, cr.Body)
			}
			if cd := cr.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="`+d.Slug+"-") {
				t.Errorf("Content-Disposition %q", cd)
			}
			if ct := cr.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv; charset=utf-8") {
				t.Errorf("Content-Type %q", ct)
			}
			recs, err := csv.NewReader(strings.NewReader(cr.Body)).ReadAll()
			if err != nil || len(recs) == 0 {
				t.Fatalf("csv: %v (%d records)", err, len(recs))
			}
		})
	}
	t.Run("BadFilter", func(t *testing.T) {
		r := e.get(t, c, "/reports/circulation?from=yesterday&to=2026-01-01")
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "is not a date") {
			t.Errorf("status %d", r.Status)
		}
		if r := e.get(t, c, "/reports/circulation/csv?group=weekday"); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("csv with a bad filter: %d", r.Status)
		}
		if r := e.get(t, c, "/reports/no-such-report"); r.Status != http.StatusNotFound {
			t.Errorf("unknown report: %d", r.Status)
		}
	})
}
