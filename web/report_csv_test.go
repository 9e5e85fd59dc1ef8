package web_test

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
)

// TestReportCSVSemicolonFormula: a patron's surname "Doe;=1+1;" in the overdue
// items' CSV file opens as text in a spreadsheet that reads with semicolons (Excel
// in most of Europe) as in one that reads with commas: the cell is quoted and the
// part after the semicolon starts with an apostrophe.
func TestReportCSVSemicolonFormula(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	read := func(comma rune) [][]string {
		t.Helper()
		r := e.get(t, c, "/reports/overdue/csv")
		if r.Status != http.StatusOK {
			t.Fatalf("csv: %d %s", r.Status, r.Body)
		}
		cr := csv.NewReader(strings.NewReader(r.Body))
		cr.Comma, cr.LazyQuotes, cr.FieldsPerRecord = comma, true, -1
		recs, err := cr.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	recs := read(',')
	if len(recs) < 2 || len(recs[0]) < 8 || recs[0][6] != "Card" {
		t.Fatalf("the demo's overdue items: %q", recs)
	}
	card := recs[1][6]
	e.exec(t, `UPDATE patrons SET surname = ? WHERE card = ?`, "Doe;=1+1;", card)

	found := false
	for _, rec := range read(',') {
		if len(rec) > 7 && rec[6] == card {
			found = true
			if !strings.Contains(rec[7], "Doe;'=1+1;") {
				t.Errorf("read with commas, the patron is %q", rec[7])
			}
		}
	}
	if !found {
		t.Fatalf("card %s is not in the file", card)
	}
	for _, comma := range []rune{';', ','} {
		for i, rec := range read(comma) {
			for j, f := range rec {
				if s := strings.TrimLeft(f, ` "`); s != "" && strings.ContainsRune("=+-@", rune(s[0])) && strings.Trim(s, "-0123456789.") != "" {
					t.Errorf("read with %q, line %d field %d is a formula: %q", comma, i+1, j+1, f)
				}
			}
		}
	}
}
