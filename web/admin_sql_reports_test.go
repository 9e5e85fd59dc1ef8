package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestSQLReports: an administrator saves a report with a parameter, runs it, and
// downloads it; SQL that writes is refused when saved, with the message beside
// the field; the desk's account cannot reach the pages.
func TestSQLReports(t *testing.T) {
	e := newDemoEnv(t)
	admin := e.client(t)
	if r := e.login(t, admin, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("login: %d", r.Status)
	}
	r := e.post(t, admin, "/admin/sql-reports", url.Values{"name": {"Delete all"}, "sql": {"DELETE FROM loans"}})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Reports cannot change the database") {
		t.Fatalf("a DELETE saved: %d", r.Status)
	}
	r = e.post(t, admin, "/admin/sql-reports", url.Values{"name": {"Items by status"},
		"sql": {"SELECT status, count(*) AS items FROM items WHERE home_branch_id = :branch GROUP BY status ORDER BY status"}})
	if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/admin/sql-reports/") {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	page := e.get(t, admin, r.Location)
	if !strings.Contains(page.Body, `name="p_branch"`) {
		t.Fatal("no field for :branch")
	}
	run := e.post(t, admin, r.Location+"/run", url.Values{"p_branch": {"1"}})
	if run.Status != http.StatusOK || !strings.Contains(run.Body, "available") {
		t.Fatalf("run: %d", run.Status)
	}
	csv := e.post(t, admin, r.Location+"/csv", url.Values{"p_branch": {"1"}})
	if csv.Status != http.StatusOK || !strings.HasPrefix(csv.Body, "status,items\r\n") {
		t.Errorf("csv: %d %q", csv.Status, csv.Body)
	}
	// Each run (page and CSV) is in the audit log: the report, who ran it, the
	// parameters, the rows.
	var details []string
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT detail FROM audit_log WHERE action = 'sql_report.run' AND object_type = 'saved_report' AND object_id = ? AND actor = 'admin' ORDER BY id`,
			strings.TrimPrefix(r.Location, "/admin/sql-reports/"))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var d string
			if err := rows.Scan(&d); err != nil {
				return err
			}
			details = append(details, d)
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	rowsShown := strings.Count(run.Body, "<tr") - 1
	if len(details) != 2 || details[0] != fmt.Sprintf("%d rows; :branch=\"1\"", rowsShown) || details[1] != fmt.Sprintf("CSV: %d rows; :branch=\"1\"", rowsShown) {
		t.Errorf("audit log of the runs: %q (the page showed %d rows)", details, rowsShown)
	}
	if r := e.post(t, admin, r.Location+"/run", url.Values{}); r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Give a value for :branch") {
		t.Errorf("run without the parameter: %d", r.Status)
	}
	desk := e.deskClient(t)
	if r := e.get(t, desk, "/admin/sql-reports"); r.Status != http.StatusForbidden {
		t.Errorf("desk account: %d", r.Status)
	}
}
