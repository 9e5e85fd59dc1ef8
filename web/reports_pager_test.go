package web_test

import (
	"encoding/csv"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/reports"
)

// TestReportOverduePager: with a page of one row, the overdue report's pages
// link to each other with "Next page" and "Previous page" (plain links that keep
// the filters), each page shows its own row of the CSV file, and a page past the
// end says so and links to the last page.
func TestReportOverduePager(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	cr := e.get(t, c, "/reports/overdue/csv?branch=")
	recs, err := csv.NewReader(strings.NewReader(cr.Body)).ReadAll()
	if err != nil || len(recs) < 3 {
		t.Fatalf("csv: %v, %d records: the demo needs two overdue loans", err, len(recs))
	}
	barcodes := make([]string, 0, len(recs)-1)
	for _, r := range recs[1:] {
		barcodes = append(barcodes, r[2])
	}
	old := reports.PageRows
	reports.PageRows = 1
	t.Cleanup(func() { reports.PageRows = old })

	link := func(body, rel, text string) string {
		m := regexp.MustCompile(`<a href="([^"]*)" rel="`+rel+`">`+text+`</a>`).FindAllStringSubmatch(body, -1)
		if len(m) == 0 {
			return ""
		}
		return html.UnescapeString(m[0][1])
	}
	path := "/reports/overdue?branch="
	for i, bc := range barcodes {
		r := e.get(t, c, path)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d", path, r.Status)
		}
		if !strings.Contains(r.Body, ">"+bc+"<") {
			t.Errorf("page %d does not show %s, row %d of the CSV file", i+1, bc, i+1)
		}
		for j, other := range barcodes {
			if j != i && other != bc && strings.Contains(r.Body, ">"+other+"<") {
				t.Errorf("page %d shows %s, row %d of the CSV file", i+1, other, j+1)
			}
		}
		if want := "Page " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(barcodes)); !strings.Contains(r.Body, want) {
			t.Errorf("page %d does not say %q", i+1, want)
		}
		prev, next := link(r.Body, "prev", "Previous page"), link(r.Body, "next", "Next page")
		if i == 0 && prev != "" {
			t.Errorf("the first page links to a previous page %q", prev)
		}
		if i > 0 && (!strings.Contains(prev, "page="+strconv.Itoa(i)) || !strings.Contains(prev, "branch=")) {
			t.Errorf("page %d's previous page is %q", i+1, prev)
		}
		if i == len(barcodes)-1 {
			if next != "" {
				t.Errorf("the last page links to a next page %q", next)
			}
			break
		}
		if !strings.HasPrefix(next, "/reports/overdue?") || !strings.Contains(next, "page="+strconv.Itoa(i+2)) || !strings.Contains(next, "branch=") {
			t.Fatalf("page %d's next page is %q", i+1, next)
		}
		path = next
	}

	r := e.get(t, c, "/reports/overdue?page=99")
	last := "/reports/overdue?page=" + strconv.Itoa(len(barcodes))
	if r.Status != http.StatusOK || !strings.Contains(r.Body, "There is no page 99: these filters give "+strconv.Itoa(len(barcodes))+" pages.") ||
		!strings.Contains(html.UnescapeString(r.Body), `href="`+last+`">Go to the last page`) {
		t.Errorf("page 99: %d, no message with a link to %s", r.Status, last)
	}
	if strings.Contains(r.Body, "Nothing to report") || strings.Contains(r.Body, "Next page") {
		t.Error("page 99 says nothing to report, or links to a next page")
	}
}
