package reports_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/reports"
)

// TestServiceReport: the page's choices come back with a filter not
// understood (a field error, no result), and with the result when the report
// runs.
func TestServiceReport(t *testing.T) {
	d, _ := mustDemo(t)
	s := reports.NewService(d, time.Minute, nil)
	def, err := reports.Find("circulation")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := s.Report(ctx, def, url.Values{reports.FieldFrom: {"not a day"}})
	if stacks.ErrorField(err) == "" || p.Result != nil {
		t.Errorf("a day not understood: %v, result %v; want a field error and no result", err, p.Result)
	}
	if len(p.Choices.Branches) == 0 {
		t.Error("no branches to choose from beside the field error")
	}
	p, err = s.Report(ctx, def, def.Defaults(demoNow))
	if err != nil {
		t.Fatal(err)
	}
	if p.Result == nil || len(p.Choices.Branches) == 0 {
		t.Errorf("the report ran without a result (%v) or choices (%d branches)", p.Result, len(p.Choices.Branches))
	}
}

// TestServiceRunReport: a saved SQL report's run is audited, with its rows'
// count.
func TestServiceRunReport(t *testing.T) {
	d, _ := mustDemo(t)
	s := reports.NewService(d, time.Minute, nil)
	ctx := context.Background()
	id, err := s.SaveReport(ctx, stacks.System, 0, reports.SavedInput{Name: "Branches " + t.Name(), SQL: "SELECT code FROM branches"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.SavedReport(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.RunReport(ctx, stacks.System, r, nil, reports.Limits{}, false)
	if err != nil {
		t.Fatal(err)
	}
	var runs int
	if err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM audit_log WHERE action = 'sql_report.run' AND object_id = ?`, id).Scan(&runs)
	}); err != nil {
		t.Fatal(err)
	}
	if runs != 1 || len(res.Rows) == 0 {
		t.Errorf("%d rows, %d runs audited; want rows and one run", len(res.Rows), runs)
	}
	if err := s.DeleteReport(ctx, stacks.System, id); err != nil {
		t.Fatal(err)
	}
}
