package reports_test

import (
	"slices"
	"testing"

	"github.com/stacks-ils/stacks/reports"
)

// setPageRows sets the page size for one test and puts it back after.
func setPageRows(t *testing.T, n int) {
	t.Helper()
	old := reports.PageRows
	reports.PageRows = n
	t.Cleanup(func() { reports.PageRows = old })
}

// TestOverduePages: with a page a third of the overdue loans long, the pages
// joined in order are the whole report (the CSV's rows, in its order), each page
// but the last is full, each says its number and the count of pages, and a page
// past the last has no rows and says it is past the end.
func TestOverduePages(t *testing.T) {
	d, _ := mustDemo(t)
	all, want := overdue(t, d, reports.Filter{All: true})
	if len(all.Rows) != want || want < 6 {
		t.Fatalf("%d rows for %d overdue loans: the demo has about 130", len(all.Rows), want)
	}
	size := want / 3
	setPageRows(t, size)
	pages := (want + size - 1) / size
	var joined [][]string
	for p := 1; p <= pages; p++ {
		res, _ := overdue(t, d, reports.Filter{Page: p})
		if res.Page != p || res.Pages != pages || res.Total != want || res.PastEnd() {
			t.Errorf("page %d: page %d of %d, total %d, past end %v; want of %d, total %d", p, res.Page, res.Pages, res.Total, res.PastEnd(), pages, want)
		}
		if p < pages && len(res.Rows) != size {
			t.Errorf("page %d has %d rows, want %d", p, len(res.Rows), size)
		}
		joined = append(joined, res.Rows...)
	}
	if !slices.EqualFunc(joined, all.Rows, slices.Equal) {
		t.Errorf("the %d pages joined (%d rows) differ from the whole report (%d rows)", pages, len(joined), len(all.Rows))
	}
	if first, _ := overdue(t, d, reports.Filter{}); !slices.EqualFunc(first.Rows, all.Rows[:size], slices.Equal) {
		t.Error("no page asked for is not the first page")
	}
	past, _ := overdue(t, d, reports.Filter{Page: pages + 1})
	if len(past.Rows) != 0 || !past.PastEnd() || past.Total != want {
		t.Errorf("page %d of %d: %d rows, past end %v, total %d", past.Page, past.Pages, len(past.Rows), past.PastEnd(), past.Total)
	}
}
