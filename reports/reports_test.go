package reports_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/reports"
)

// demoNow is the clock of the test library.
var demoNow = dbtest.Monday

// demoLib is the default demo library (the one `serve --demo` makes), built once
// for the package's tests, which only read it.
var demoLib struct {
	once sync.Once
	db   *db.DB
	sum  demo.Summary
	err  error
	dir  string
}

func mustDemo(tb testing.TB) (*db.DB, demo.Summary) {
	tb.Helper()
	demoLib.once.Do(func() {
		dir, err := osMkdirTemp()
		if err != nil {
			demoLib.err = err
			return
		}
		demoLib.dir = dir
		d, err := db.Open(filepath.Join(dir, "demo.db"), db.Options{})
		if err != nil {
			demoLib.err = err
			return
		}
		d.Now = func() time.Time { return demoNow }
		ctx := context.Background()
		if _, err := d.Migrate(ctx); err != nil {
			demoLib.err = err
			return
		}
		demoLib.sum, demoLib.err = demo.Create(ctx, d, demo.Options{})
		demoLib.db = d
	})
	if demoLib.err != nil {
		tb.Fatal(demoLib.err)
	}
	return demoLib.db, demoLib.sum
}

// run runs the standard report slug with the form values v.
func run(t *testing.T, d *db.DB, slug string, v url.Values) reports.Result {
	t.Helper()
	def, err := reports.Find(slug)
	if err != nil {
		t.Fatal(err)
	}
	f, err := def.ParseFilter(v)
	if err != nil {
		t.Fatalf("%s %v: %v", slug, v, err)
	}
	f.All = true
	var res reports.Result
	if err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
		res, err = def.Run(tx, f)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return res
}

// ids lists the ids of a table's rows (the test walks every patron, record, item).
func ids(t *testing.T, tx *db.Tx, q string) []int64 {
	t.Helper()
	rows, err := tx.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

func sumColumn(t *testing.T, res reports.Result, col int) int {
	t.Helper()
	n := 0
	for _, r := range res.Rows {
		v, err := strconv.Atoi(r[col])
		if err != nil {
			t.Fatalf("row %v column %d: %v", r, col, err)
		}
		n += v
	}
	return n
}

// TestReportTotalsMatchDomain: each report's totals are the demo library's own
// counts (demo.Summary, what the generator made) and the domain packages' (a
// patron's loans from circulation, a record's queue from holds, a patron from
// patrons, an item's history from circulation), walked one by one.
func TestReportTotalsMatchDomain(t *testing.T) {
	d, sum := mustDemo(t)
	ctx := context.Background()
	var (
		allLoans, overdue, issuedLastYear int
		openHolds, patronCount            int
		patronsThisYear                   int
		notBorrowedSince                  int
		loansOfRecord                     = map[int64]int{}
	)
	since := demoNow.AddDate(0, -6, 0)
	sinceDay := time.Date(since.Year(), since.Month(), since.Day(), 0, 0, 0, 0, time.UTC)
	yearStart := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := d.Read(ctx, func(tx *db.Tx) error {
		for _, pid := range ids(t, tx, `SELECT id FROM patrons`) {
			loans, err := circulation.PatronLoans(tx, pid)
			if err != nil {
				return err
			}
			for _, l := range loans {
				if l.DueAt.Before(demoNow) {
					overdue++
				}
			}
			h, err := circulation.PatronHistory(tx, pid, 0)
			if err != nil {
				return err
			}
			current := 0
			for _, l := range h.Loans {
				if l.Current() {
					current++
				}
			}
			if current != len(loans) {
				t.Errorf("patron %d: history has %d current loans, PatronLoans %d", pid, current, len(loans))
			}
			allLoans += len(h.Loans)
			p, err := patrons.FindByID(tx, pid)
			if err != nil {
				return err
			}
			patronCount++
			if !p.CreatedAt.Before(yearStart) && p.CreatedAt.Before(demoNow.AddDate(0, 0, 1)) {
				patronsThisYear++
			}
		}
		for _, rid := range ids(t, tx, `SELECT id FROM records`) {
			q, err := holds.RecordQueue(tx, rid)
			if err != nil {
				return err
			}
			openHolds += len(q)
		}
		for _, iid := range ids(t, tx, `SELECT id FROM items WHERE status NOT IN ('withdrawn', 'lost')`) {
			h, err := circulation.ItemHistory(tx, iid, 0)
			if err != nil {
				return err
			}
			recent := false
			for _, l := range h.Loans {
				if !l.IssuedAt.Before(sinceDay) {
					recent = true
				}
				if !l.IssuedAt.Before(yearStart) {
					issuedLastYear++
					loansOfRecord[l.RecordID]++
				}
			}
			if !recent {
				notBorrowedSince++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if overdue != sum.Overdue || allLoans == 0 || openHolds != sum.Holds || patronCount != sum.Patrons {
		t.Fatalf("the domain packages disagree with the demo's summary: overdue %d/%d, holds %d/%d, patrons %d/%d",
			overdue, sum.Overdue, openHolds, sum.Holds, patronCount, sum.Patrons)
	}
	t.Logf("demo: %d items, %d loans ever (%d current, %d overdue), %d open holds, %d patrons", sum.Items, allLoans, sum.Loans, sum.Overdue, sum.Holds, sum.Patrons)

	t.Run("Circulation", func(t *testing.T) {
		for _, g := range reports.GroupOptions {
			res := run(t, d, "circulation", url.Values{"group": {g[0]}})
			if res.Total != allLoans || sumColumn(t, res, 1) != allLoans {
				t.Errorf("by %s: total %d (column %d), want every loan of the patrons' histories: %d", g[0], res.Total, sumColumn(t, res, 1), allLoans)
			}
		}
		// Items neither withdrawn nor lost issued this year (the demo has none of those).
		res := run(t, d, "circulation", url.Values{"from": {"2026-01-01"}, "to": {"2026-11-30"}})
		if res.Total != issuedLastYear {
			t.Errorf("2026: %d loans, the items' histories have %d", res.Total, issuedLastYear)
		}
	})
	t.Run("Overdue", func(t *testing.T) {
		res := run(t, d, "overdue", nil)
		if res.Total != overdue || len(res.Rows) != overdue {
			t.Errorf("%d overdue (%d rows), circulation.PatronLoans has %d", res.Total, len(res.Rows), overdue)
		}
		n := 0
		for _, b := range res.Chart {
			n += b.Value
		}
		if n != overdue {
			t.Errorf("the chart counts %d, want %d", n, overdue)
		}
	})
	t.Run("HoldsQueue", func(t *testing.T) {
		res := run(t, d, "holds-queue", nil)
		if res.Total != openHolds {
			t.Errorf("%d open holds, holds.RecordQueue has %d", res.Total, openHolds)
		}
		parts := 0
		for _, st := range []string{"queued", "in_transit", "waiting"} {
			parts += run(t, d, "holds-queue", url.Values{"status": {st}}).Total
		}
		if parts != openHolds {
			t.Errorf("by status %d, all %d", parts, openHolds)
		}
	})
	t.Run("NewPatrons", func(t *testing.T) {
		if res := run(t, d, "new-patrons", nil); res.Total != patronCount || sumColumn(t, res, 2) != patronCount {
			t.Errorf("all time: %d, patrons.FindByID found %d", res.Total, patronCount)
		}
		if res := run(t, d, "new-patrons", url.Values{"from": {"2026-01-01"}, "to": {"2026-11-30"}}); res.Total != patronsThisYear {
			t.Errorf("2026: %d, want %d", res.Total, patronsThisYear)
		}
	})
	t.Run("MostBorrowed", func(t *testing.T) {
		res := run(t, d, "most-borrowed", url.Values{"from": {"2026-01-01"}, "to": {"2026-11-30"}, "limit": {"5"}})
		if len(res.Rows) != 5 {
			t.Fatalf("%d rows, want 5", len(res.Rows))
		}
		best := 0
		for _, n := range loansOfRecord {
			best = max(best, n)
		}
		if top, _ := strconv.Atoi(res.Rows[0][3]); top != best {
			t.Errorf("the top title has %d loans, the items' histories give %d", top, best)
		}
	})
	t.Run("NotBorrowed", func(t *testing.T) {
		res := run(t, d, "not-borrowed", url.Values{"since": {sinceDay.Format(db.DayFormat)}})
		if res.Total != notBorrowedSince || len(res.Rows) != notBorrowedSince {
			t.Errorf("%d items (%d rows), circulation.ItemHistory finds %d", res.Total, len(res.Rows), notBorrowedSince)
		}
	})
	t.Run("Collection", func(t *testing.T) {
		res := run(t, d, "collection", nil)
		if res.Total != sum.Items || sumColumn(t, res, 2) != sum.Items {
			t.Errorf("%d items, the demo made %d", res.Total, sum.Items)
		}
		if onLoan := sumColumn(t, res, 3); onLoan != sum.Loans {
			t.Errorf("%d on loan, the demo has %d current loans", onLoan, sum.Loans)
		}
	})
}

// TestReportCSV: the file is RFC 4180 (encoding/csv reads it back, CRLF line
// ends), UTF-8 without a BOM, the column names first, and a formula-looking cell
// is defused.
func TestReportCSV(t *testing.T) {
	res := reports.Result{
		Columns: []reports.Column{{Name: "Title"}, {Name: "Loans", Numeric: true}},
		Rows:    [][]string{{"Café, \"quoted\"\nline", "3"}, {"=HYPERLINK(\"x\")", "-1"}},
	}
	var buf bytes.Buffer
	if err := reports.WriteCSV(&buf, res); err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(buf.Bytes(), []byte("\xef\xbb\xbf")) {
		t.Error("the file starts with a BOM")
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("Title,Loans\r\n")) {
		t.Errorf("header line: %q", buf.String())
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"Title", "Loans"}, {"Café, \"quoted\"\nline", "3"}, {"'=HYPERLINK(\"x\")", "-1"}}
	for i := range want {
		for j := range want[i] {
			if recs[i][j] != want[i][j] {
				t.Errorf("record %d field %d: %q, want %q", i, j, recs[i][j], want[i][j])
			}
		}
	}
}

// TestParseFilterErrors: bad input is a message about its field, never a failure.
func TestParseFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		slug  string
		v     url.Values
		field string
	}{
		{"circulation", url.Values{"from": {"31/01/2026"}}, "from"},
		{"circulation", url.Values{"from": {"2026-02-01"}, "to": {"2026-01-01"}}, "to"},
		{"circulation", url.Values{"group": {"weekday"}}, "group"},
		{"overdue", url.Values{"branch": {"x"}}, "branch"},
		{"not-borrowed", url.Values{}, "since"},
		{"most-borrowed", url.Values{"limit": {"100000"}}, "limit"},
		{"holds-queue", url.Values{"status": {"fulfilled"}}, "status"},
	} {
		def, _ := reports.Find(tc.slug)
		_, err := def.ParseFilter(tc.v)
		if err == nil {
			t.Errorf("%s %v: accepted", tc.slug, tc.v)
			continue
		}
		if f := stacksField(err); f != tc.field {
			t.Errorf("%s %v: error about %q (%v), want %q", tc.slug, tc.v, f, err, tc.field)
		}
	}
}
