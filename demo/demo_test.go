package demo_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/staff"

	"golang.org/x/crypto/bcrypt"
)

// mustCreate fills d with the default demo library.
func mustCreate(tb testing.TB, d *db.DB) demo.Summary {
	tb.Helper()
	start := time.Now()
	sum, err := demo.Create(context.Background(), d, demo.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("demo.Create took %v: %+v", time.Since(start).Round(time.Millisecond), sum)
	return sum
}

// queryInt runs a query that returns one integer.
func queryInt(tb testing.TB, d *db.DB, query string, args ...any) int {
	tb.Helper()
	var n sql.NullInt64
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(query, args...).Scan(&n)
	})
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return int(n.Int64)
}

// queryRows runs a query and returns its rows as strings.
func queryRows(tb testing.TB, d *db.DB, query string, args ...any) [][]string {
	tb.Helper()
	var out [][]string
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = v.String
				if !v.Valid {
					row[i] = "NULL"
				}
			}
			out = append(out, row)
		}
		return rows.Err()
	})
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return out
}

func TestCreate(t *testing.T) {
	ctx := context.Background()
	d := dbtest.OpenAt(t, dbtest.Monday, db.Options{})
	empty, err := demo.IsEmpty(ctx, d)
	if err != nil || !empty {
		t.Fatalf("IsEmpty before Create = %v, %v; want true", empty, err)
	}
	sum := mustCreate(t, d)

	t.Run("Branches", func(t *testing.T) {
		got := queryRows(t, d, `SELECT code, name, closed_weekdays, closes_at FROM branches ORDER BY id`)
		want := [][]string{{"CEN", "Central", "0", "20:00"}, {"EAS", "Eastside", "0", "20:00"}, {"WES", "Westside", "0", "20:00"}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("branches = %v, want %v", got, want)
		}
	})

	t.Run("Calendar", func(t *testing.T) {
		for _, day := range []string{"2026-01-01", "2026-12-25", "2026-12-26", "2027-01-01"} {
			if n := queryInt(t, d, `SELECT count(*) FROM closed_days WHERE branch_id IS NULL AND day = ?`, day); n != 1 {
				t.Errorf("holiday %s at all branches: %d rows, want 1", day, n)
			}
		}
		if n := queryInt(t, d, `SELECT count(*) FROM closed_days WHERE branch_id IS NOT NULL`); n < 1 {
			t.Error("no branch-specific closed day")
		}
	})

	t.Run("Staff", func(t *testing.T) {
		svc := staff.NewService(d)
		for _, c := range []struct{ user, name, role string }{
			{"desk", "Morgan Desk", staff.RoleCirculation},
			{"admin", "Avery Admin", staff.RoleAdmin},
		} {
			u, err := svc.Authenticate(ctx, c.user, c.user, "192.0.2.1")
			if err != nil {
				t.Fatalf("sign in as %s: %v", c.user, err)
			}
			if u.DisplayName != c.name || u.Role != c.role || u.BranchCode != "CEN" {
				t.Errorf("%s = %q %s at %s; want %q %s at CEN", c.user, u.DisplayName, u.Role, u.BranchCode, c.name, c.role)
			}
		}
	})

	t.Run("Setup", func(t *testing.T) {
		if got := queryRows(t, d, `SELECT value FROM preferences WHERE name = 'library_name'`); fmt.Sprint(got) != "[[Stacks Demo Library]]" {
			t.Errorf("library_name = %v", got)
		}
		if got := queryRows(t, d, `SELECT value FROM preferences WHERE name = 'fines_limit_cents'`); fmt.Sprint(got) != "[[500]]" {
			t.Errorf("fines_limit_cents = %v", got)
		}
		if got := queryRows(t, d, `SELECT code, name FROM patron_categories ORDER BY id`); fmt.Sprint(got) != "[[ADULT Adult] [CHILD Child] [STAFF Staff]]" {
			t.Errorf("patron categories = %v", got)
		}
		if got := queryRows(t, d, `SELECT code, name, not_for_loan FROM item_types ORDER BY id`); fmt.Sprint(got) != "[[BOOK Book 0] [DVD DVD 0] [REF Reference 1]]" {
			t.Errorf("item types = %v", got)
		}
		rules := `SELECT loan_period, renewals, fine_cents, fine_cap_cents FROM circ_rules r JOIN item_types t ON t.id = r.item_type_id
			WHERE r.patron_category_id IS NULL AND r.branch_id IS NULL AND t.code = ?`
		for code, want := range map[string]string{"BOOK": "[[21 2 25 500]]", "DVD": "[[7 1 100 1000]]", "REF": "[[0 0 0 0]]"} {
			if got := queryRows(t, d, rules, code); fmt.Sprint(got) != want {
				t.Errorf("%s rule = %v, want %v", code, got, want)
			}
		}
		if n := queryInt(t, d, `SELECT count(*) FROM circ_rules WHERE patron_category_id IS NULL AND item_type_id IS NULL AND branch_id IS NULL`); n != 1 {
			t.Errorf("%d default rules, want 1", n)
		}
		if n := queryInt(t, d, `SELECT count(*) FROM circ_rules WHERE patron_category_id IS NOT NULL AND item_type_id IS NOT NULL`); n < 1 {
			t.Error("no rule for a category and an item type")
		}
	})

	t.Run("FixturePatrons", func(t *testing.T) {
		got := queryRows(t, d, `SELECT p.card, p.first_name, p.surname, c.code, b.code, p.blocked, p.block_note, CASE WHEN p.expires_on > ? THEN 1 ELSE 0 END
			FROM patrons p JOIN patron_categories c ON c.id = p.category_id JOIN branches b ON b.id = p.home_branch_id
			WHERE p.card <= 'P0005' ORDER BY p.card`, db.FormatDay(dbtest.Monday))
		want := [][]string{
			{"P0001", "Alex", "Reader", "ADULT", "CEN", "0", "", "1"},
			{"P0002", "Blake", "Owing", "ADULT", "CEN", "0", "", "1"},
			{"P0003", "Casey", "Waiting", "ADULT", "CEN", "0", "", "1"},
			{"P0004", "Dana", "Expired", "ADULT", "CEN", "0", "", "0"},
			{"P0005", "Emery", "Barred", "ADULT", "CEN", "1", "Repeated damage to items; see the branch manager before lending.", "1"},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("fixture patrons =\n%v\nwant\n%v", got, want)
		}
		for _, card := range []string{"P0001", "P0002", "P0003", "P0005"} {
			if n := queryInt(t, d, `SELECT count(*) FROM patrons WHERE card = ? AND expires_on >= ?`, card, db.FormatDay(dbtest.Monday.AddDate(1, 0, 0))); n != 1 {
				t.Errorf("%s expires within a year", card)
			}
		}
		for _, card := range []string{"P0001", "P0002", "P0003"} {
			if n := queryInt(t, d, `SELECT count(*) FROM loans l JOIN patrons p ON p.id = l.patron_id WHERE p.card = ? AND l.returned_at IS NULL`, card); n != 0 {
				t.Errorf("%s has %d current loans, want 0", card, n)
			}
			if n := queryInt(t, d, `SELECT count(*) FROM holds h JOIN patrons p ON p.id = h.patron_id WHERE p.card = ?`, card); n != 0 {
				t.Errorf("%s has %d holds, want 0", card, n)
			}
		}
		for _, card := range []string{"P0001", "P0003"} {
			if n := queryInt(t, d, `SELECT count(*) FROM loans l JOIN patrons p ON p.id = l.patron_id WHERE p.card = ?`, card); n != 0 {
				t.Errorf("%s has %d loans in the history, want 0", card, n)
			}
			if n := queryInt(t, d, `SELECT count(*) FROM ledger l JOIN patrons p ON p.id = l.patron_id WHERE p.card = ?`, card); n != 0 {
				t.Errorf("%s has %d ledger rows, want 0", card, n)
			}
		}
	})

	t.Run("BlakeOwes1250", func(t *testing.T) {
		owing := `FROM ledger g JOIN patrons p ON p.id = g.patron_id WHERE p.card = 'P0002'`
		if n := queryInt(t, d, `SELECT sum(g.amount_cents) `+owing); n != 1250 {
			t.Errorf("P0002 balance = %d, want 1250", n)
		}
		if n := queryInt(t, d, `SELECT count(*) `+owing+` AND g.kind <> 'overdue'`); n != 0 {
			t.Errorf("P0002 has %d ledger rows that are not overdue fines", n)
		}
		// Each fine belongs to a returned loan of P0002's, of an item that is not a
		// fixture and is available now.
		bad := queryInt(t, d, `SELECT count(*) `+owing+` AND NOT EXISTS (
			SELECT 1 FROM loans l JOIN items i ON i.id = l.item_id
			WHERE l.id = g.loan_id AND l.patron_id = p.id AND l.returned_at IS NOT NULL
			  AND l.returned_at > l.due_at AND i.barcode NOT LIKE 'I%' AND i.status = 'available')`)
		if bad != 0 {
			t.Errorf("%d of P0002's fines are not on late returned loans of available generated items", bad)
		}
	})

	t.Run("FixtureItems", func(t *testing.T) {
		got := queryRows(t, d, `SELECT i.barcode, i.status, hb.code, cb.code, t.code,
				(SELECT count(*) FROM items c WHERE c.record_id = i.record_id),
				(SELECT count(*) FROM holds h WHERE h.record_id = i.record_id),
				(SELECT count(*) FROM loans l WHERE l.item_id = i.id)
			FROM items i JOIN branches hb ON hb.id = i.home_branch_id JOIN branches cb ON cb.id = i.current_branch_id
			JOIN item_types t ON t.id = i.item_type_id
			WHERE i.barcode LIKE 'I%' ORDER BY i.barcode`)
		if len(got) != 10 {
			t.Fatalf("%d fixture items, want 10", len(got))
		}
		for i, row := range got {
			want := []string{fmt.Sprintf("I%05d", i+1), "available", "CEN", "CEN", "BOOK", "1", "0", "0"}
			if fmt.Sprint(row) != fmt.Sprint(want) {
				t.Errorf("fixture item = %v, want %v", row, want)
			}
		}
		got = queryRows(t, d, `SELECT r.title, r.author, r.year, r.publisher FROM records r JOIN items i ON i.record_id = r.id WHERE i.barcode = 'I00010'`)
		if want := "[[The Left Hand of Darkness Le Guin, Ursula K. 1969 Ace Books]]"; fmt.Sprint(got) != want {
			t.Errorf("I00010 = %v, want %v", got, want)
		}
	})

	t.Run("SearchIsUnambiguous", func(t *testing.T) {
		word := regexp.MustCompile(`(?i)\b(left|hands?|dark\w*)\b`)
		for _, row := range queryRows(t, d, `SELECT title FROM records WHERE title <> 'The Left Hand of Darkness'`) {
			if word.MatchString(row[0]) {
				t.Errorf("title %q is near the scenario's search", row[0])
			}
		}
		if n := queryInt(t, d, `SELECT count(*) FROM records WHERE author LIKE '%Guin%'`); n != 1 {
			t.Errorf("%d records by Le Guin, want 1", n)
		}
	})

	t.Run("Totals", func(t *testing.T) {
		records := queryInt(t, d, `SELECT count(*) FROM records`)
		items := queryInt(t, d, `SELECT count(*) FROM items`)
		if records < 2010 {
			t.Errorf("%d records, want at least 2010", records)
		}
		if perRecord := float64(items-10) / float64(records-10); perRecord < 2.5 || perRecord > 3.5 {
			t.Errorf("%.2f copies per generated record, want about 3", perRecord)
		}
		for _, c := range []struct {
			what  string
			query string
			min   int
		}{
			{"DVD items", `SELECT count(*) FROM items WHERE item_type_id = (SELECT id FROM item_types WHERE code = 'DVD')`, 100},
			{"reference items", `SELECT count(*) FROM items WHERE item_type_id = (SELECT id FROM item_types WHERE code = 'REF')`, 20},
			{"items at Eastside", `SELECT count(*) FROM items WHERE home_branch_id = 2`, 1000},
			{"items at Westside", `SELECT count(*) FROM items WHERE home_branch_id = 3`, 1000},
			{"current loans", `SELECT count(*) FROM loans WHERE returned_at IS NULL`, 1},
			{"overdue loans", `SELECT count(*) FROM loans WHERE returned_at IS NULL AND due_at < ?`, 1},
			{"returned loans", `SELECT count(*) FROM loans WHERE returned_at IS NOT NULL`, 1000},
			{"queued holds", `SELECT count(*) FROM holds WHERE status = 'queued'`, 1},
			{"waiting holds", `SELECT count(*) FROM holds WHERE status = 'waiting'`, 1},
			{"overdue fines", `SELECT count(*) FROM ledger WHERE kind = 'overdue'`, 10},
			{"payments", `SELECT count(*) FROM ledger WHERE kind = 'payment'`, 10},
			{"expired patrons", `SELECT count(*) FROM patrons WHERE expires_on <= ?`, 2},
			{"blocked patrons", `SELECT count(*) FROM patrons WHERE blocked = 1`, 2},
			{"child patrons", `SELECT count(*) FROM patrons WHERE category_id = (SELECT id FROM patron_categories WHERE code = 'CHILD')`, 20},
		} {
			var args []any
			if strings.Contains(c.query, "?") {
				args = append(args, db.FormatTime(dbtest.Monday))
			}
			if n := queryInt(t, d, c.query, args...); n < c.min {
				t.Errorf("%d %s, want at least %d", n, c.what, c.min)
			}
		}
		if n := queryInt(t, d, `SELECT count(*) FROM patrons`); n != 500 {
			t.Errorf("%d patrons, want 500", n)
		}
		if n := queryInt(t, d, `SELECT count(*) FROM patrons WHERE card = 'P0500'`); n != 1 {
			t.Error("no patron P0500")
		}
		want := demo.Summary{
			Branches: 3, Staff: 2,
			Patrons: 500, Records: records, Items: items,
			Loans:   queryInt(t, d, `SELECT count(*) FROM loans WHERE returned_at IS NULL`),
			Overdue: queryInt(t, d, `SELECT count(*) FROM loans WHERE returned_at IS NULL AND due_at < ?`, db.FormatTime(dbtest.Monday)),
			Holds:   queryInt(t, d, `SELECT count(*) FROM holds WHERE status IN ('queued', 'in_transit', 'waiting')`),
			Notices: queryInt(t, d, `SELECT count(*) FROM notice_messages WHERE status = 'pending'`),
		}
		if sum != want || sum.Notices == 0 {
			t.Errorf("summary = %+v, database has %+v", sum, want)
		}
		loanable := queryInt(t, d, `SELECT count(*) FROM items i JOIN item_types t ON t.id = i.item_type_id WHERE t.not_for_loan = 0 AND i.barcode NOT LIKE 'I%'`)
		if share := float64(sum.Loans) / float64(loanable); share < 0.08 || share > 0.15 {
			t.Errorf("%.1f%% of loanable generated copies on loan, want 10-15%%", 100*share)
		}
	})

	t.Run("Codes", func(t *testing.T) {
		barcode := regexp.MustCompile(`^39999[0-9]{9}$`)
		for _, row := range queryRows(t, d, `SELECT barcode FROM items WHERE barcode NOT LIKE 'I%'`) {
			if !barcode.MatchString(row[0]) || !luhnValid(row[0]) {
				t.Fatalf("generated barcode %q is not 39999 + 8 digits + a Luhn check digit", row[0])
			}
		}
		for _, row := range queryRows(t, d, `SELECT isbn FROM records WHERE isbn <> ''`) {
			if !isbnValid(row[0]) {
				t.Fatalf("ISBN %q has a wrong check digit", row[0])
			}
		}
		card := regexp.MustCompile(`^P[0-9]{4,}$`)
		for _, row := range queryRows(t, d, `SELECT card FROM patrons`) {
			if !card.MatchString(row[0]) {
				t.Fatalf("card %q is not P and 4 digits", row[0])
			}
		}
		if n := queryInt(t, d, `SELECT count(*) FROM records WHERE subjects = '' OR title = '' OR author = '' OR year IS NULL`); n != 0 {
			t.Errorf("%d records lack a title, author, year or subject", n)
		}
		if n := queryInt(t, d, `SELECT count(*) FROM items WHERE call_number = ''`); n != 0 {
			t.Errorf("%d items lack a call number", n)
		}
	})

	// Every item has a shelving location, and each branch has every one of the
	// demo's locations, so a stocktake by location has a choice everywhere.
	t.Run("Locations", func(t *testing.T) {
		if n := queryInt(t, d, `SELECT count(*) FROM items WHERE location = ''`); n != 0 {
			t.Errorf("%d items lack a shelving location", n)
		}
		for _, row := range queryRows(t, d, `SELECT b.code, count(DISTINCT i.location) FROM branches b
				LEFT JOIN items i ON i.home_branch_id = b.id GROUP BY b.id ORDER BY b.id`) {
			if row[1] != "5" {
				t.Errorf("branch %s has %s locations, want 5", row[0], row[1])
			}
		}
		for prefix, want := range map[string]string{"FIC ": "Adult fiction", "SF ": "Adult fiction", "J FIC ": "Children",
			"REF ": "Reference", "DVD ": "DVDs", "B ": "Adult non-fiction", "5": "Adult non-fiction"} {
			rows := queryRows(t, d, `SELECT DISTINCT location FROM items WHERE call_number LIKE ? || '%'`, prefix)
			if len(rows) != 1 || rows[0][0] != want {
				t.Errorf("call numbers %q are shelved at %v, want %s", prefix, rows, want)
			}
		}
	})

	checkInvariants(t, d, dbtest.Monday)
}

// TestCreateOnManyDays creates smaller libraries on days where due dates move: around
// the holidays, on a Sunday, and on a leap day; and checks the invariants.
func TestCreateOnManyDays(t *testing.T) {
	for _, day := range []string{"2026-12-24", "2026-12-27", "2027-01-02", "2028-02-29"} {
		t.Run(day, func(t *testing.T) {
			now, err := time.Parse(time.DateOnly, day)
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(8 * time.Hour)
			d := dbtest.OpenAt(t, now, db.Options{})
			if _, err := demo.Create(context.Background(), d, demo.Options{Titles: 200, Patrons: 80}); err != nil {
				t.Fatal(err)
			}
			if n := queryInt(t, d, `SELECT sum(amount_cents) FROM ledger g JOIN patrons p ON p.id = g.patron_id WHERE p.card = 'P0002'`); n != 1250 {
				t.Errorf("P0002 balance = %d, want 1250", n)
			}
			checkInvariants(t, d, now)
		})
	}
}

// checkInvariants looks for data that the circulation rules could never produce.
func checkInvariants(t *testing.T, d *db.DB, now time.Time) {
	t.Helper()
	t.Run("Invariants", func(t *testing.T) {
		at := db.FormatTime(now)
		for _, c := range []struct{ what, query string }{
			{"items on loan without exactly one current loan, or with one and not on loan",
				`SELECT count(*) FROM items i WHERE (i.status = 'on_loan') <> ((SELECT count(*) FROM loans l WHERE l.item_id = i.id AND l.returned_at IS NULL) = 1)`},
			{"waiting holds whose trapped item is not on the hold shelf at the pickup branch",
				`SELECT count(*) FROM holds h LEFT JOIN items i ON i.id = h.trapped_item_id WHERE h.status = 'waiting'
				 AND (i.id IS NULL OR i.status <> 'on_hold_shelf' OR i.current_branch_id <> h.pickup_branch_id OR i.record_id <> h.record_id
				      OR h.waiting_since IS NULL OR h.pickup_by IS NULL OR h.waiting_since >= ? OR h.pickup_by <= ?)`},
			{"items on the hold shelf without a waiting hold",
				`SELECT count(*) FROM items i WHERE i.status = 'on_hold_shelf' AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.trapped_item_id = i.id AND h.status = 'waiting')`},
			{"records whose queued holds are not numbered 1..n",
				`SELECT count(*) FROM (SELECT record_id, min(priority) AS lo, max(priority) AS hi, count(*) AS n, count(DISTINCT priority) AS d
				 FROM holds WHERE status = 'queued' GROUP BY record_id) AS q WHERE lo <> 1 OR hi <> n OR d <> n`},
			{"trapped holds not at priority 0", `SELECT count(*) FROM holds WHERE status IN ('waiting', 'in_transit') AND priority <> 0`},
			{"queued holds on records with an available copy",
				`SELECT count(*) FROM holds h WHERE h.status = 'queued' AND EXISTS (SELECT 1 FROM items i WHERE i.record_id = h.record_id AND i.status = 'available')`},
			{"holds placed in the future", `SELECT count(*) FROM holds WHERE placed_at >= ?`},
			{"patrons with two open holds on one record",
				`SELECT count(*) FROM (SELECT 1 FROM holds WHERE status IN ('queued', 'in_transit', 'waiting') GROUP BY patron_id, record_id HAVING count(*) > 1) AS q`},
			{"open holds of patrons who have the title on loan",
				`SELECT count(*) FROM holds h JOIN loans l ON l.patron_id = h.patron_id AND l.returned_at IS NULL
				 JOIN items i ON i.id = l.item_id AND i.record_id = h.record_id WHERE h.status IN ('queued', 'in_transit', 'waiting')`},
			{"open holds of blocked or expired patrons",
				`SELECT count(*) FROM holds h JOIN patrons p ON p.id = h.patron_id WHERE h.status IN ('queued', 'in_transit', 'waiting') AND (p.blocked = 1 OR p.expires_on <= ?)`},
			{"patrons over their category's hold limit",
				`SELECT count(*) FROM patrons p JOIN patron_categories c ON c.id = p.category_id
				 WHERE (SELECT count(*) FROM holds h WHERE h.patron_id = p.id AND h.status IN ('queued', 'in_transit', 'waiting')) > c.max_holds`},
			{"children with more than 10 current loans",
				`SELECT count(*) FROM patrons p WHERE p.category_id = 2 AND (SELECT count(*) FROM loans l WHERE l.patron_id = p.id AND l.returned_at IS NULL) > 10`},
			{"loans or holds on fixture items", `SELECT (SELECT count(*) FROM loans WHERE item_id <= 10) + (SELECT count(*) FROM holds WHERE record_id <= 10 OR trapped_item_id <= 10)`},
			{"loans of reference items", `SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id WHERE i.item_type_id = 3`},
			{"current loans not at the item's branch",
				`SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id WHERE l.returned_at IS NULL AND l.branch_id <> i.current_branch_id`},
			{"loans not by the desk account", `SELECT count(*) FROM loans WHERE staff_id IS DISTINCT FROM (SELECT id FROM staff_users WHERE username = 'desk')`},
			{"loans due before issue, returned before issue, or issued in the future",
				`SELECT count(*) FROM loans WHERE due_at <= issued_at OR returned_at <= issued_at OR issued_at >= ? OR returned_at >= ?`},
			{"current loans of expired patrons", `SELECT count(*) FROM loans l JOIN patrons p ON p.id = l.patron_id WHERE l.returned_at IS NULL AND p.expires_on <= ?`},
			{"returned loans without a return branch", `SELECT count(*) FROM loans WHERE (returned_at IS NULL) <> (return_branch_id IS NULL)`},
			{"overlapping loans of one item",
				`SELECT count(*) FROM (SELECT returned_at, lead(issued_at) OVER (PARTITION BY item_id ORDER BY issued_at) AS next FROM loans) AS q
				 WHERE next IS NOT NULL AND (returned_at IS NULL OR returned_at > next)`},
			{"loans before the item or patron existed",
				`SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id JOIN patrons p ON p.id = l.patron_id
				 WHERE l.issued_at <= i.created_at OR l.issued_at <= p.created_at`},
			{"ledger rows on another patron's loan",
				`SELECT count(*) FROM ledger g JOIN loans l ON l.id = g.loan_id WHERE l.patron_id <> g.patron_id`},
			{"overdue fines on loans returned on time or not returned",
				`SELECT count(*) FROM ledger g JOIN loans l ON l.id = g.loan_id WHERE g.kind = 'overdue' AND (l.returned_at IS NULL OR l.returned_at <= l.due_at)`},
			{"charges that are not positive or payments that are not negative",
				`SELECT count(*) FROM ledger WHERE (kind IN ('overdue', 'lost', 'fee') AND amount_cents <= 0) OR (kind IN ('payment', 'waiver') AND amount_cents >= 0)`},
			{"ledger rows in the future", `SELECT count(*) FROM ledger WHERE created_at >= ?`},
		} {
			args := make([]any, strings.Count(c.query, "?"))
			for i := range args {
				args[i] = at
			}
			if n := queryInt(t, d, c.query, args...); n != 0 {
				t.Errorf("%d %s", n, c.what)
			}
		}
	})

	t.Run("DueDatesOnOpenDays", func(t *testing.T) {
		closed := map[string]bool{}
		for _, row := range queryRows(t, d, `SELECT coalesce(branch_id, 0), day FROM closed_days`) {
			closed[row[0]+"|"+row[1]] = true
		}
		open := func(branch, day string) bool {
			t, err := time.Parse(time.DateOnly, day)
			return err == nil && t.Weekday() != time.Sunday && !closed["0|"+day] && !closed[branch+"|"+day]
		}
		for _, row := range queryRows(t, d, `SELECT id, branch_id, issued_at, due_at, coalesce(CAST(return_branch_id AS TEXT), ''), coalesce(returned_at, '') FROM loans`) {
			if !strings.HasSuffix(row[3], "T20:00:00Z") || !open(row[1], row[3][:10]) {
				t.Fatalf("loan %s is due %s, not at closing on an open day", row[0], row[3])
			}
			if !open(row[1], row[2][:10]) {
				t.Fatalf("loan %s was issued %s, on a closed day", row[0], row[2])
			}
			if row[5] != "" && !open(row[4], row[5][:10]) {
				t.Fatalf("loan %s was returned %s, on a closed day", row[0], row[5])
			}
		}
		for _, row := range queryRows(t, d, `SELECT id, pickup_branch_id, pickup_by FROM holds WHERE status = 'waiting'`) {
			if !strings.HasSuffix(row[2], "T20:00:00Z") || !open(row[1], row[2][:10]) {
				t.Fatalf("hold %s is to be picked up by %s, not at closing on an open day", row[0], row[2])
			}
		}
	})
}

func TestIsEmptyAndRefusal(t *testing.T) {
	ctx := context.Background()
	d := dbtest.OpenAt(t, dbtest.Monday, db.Options{})
	if _, err := demo.Create(ctx, d, demo.Options{Titles: 60, Patrons: 40}); err != nil {
		t.Fatal(err)
	}
	empty, err := demo.IsEmpty(ctx, d)
	if err != nil || empty {
		t.Fatalf("IsEmpty after Create = %v, %v; want false", empty, err)
	}
	records := queryInt(t, d, `SELECT count(*) FROM records`)
	_, err = demo.Create(ctx, d, demo.Options{Titles: 60, Patrons: 40})
	if code := stacks.ErrorCode(err); code != stacks.ECONFLICT {
		t.Fatalf("second Create: error %v (code %q), want a conflict", err, code)
	}
	if n := queryInt(t, d, `SELECT count(*) FROM records`); n != records {
		t.Errorf("the refused Create changed the records: %d, then %d", records, n)
	}
	if _, err := demo.Create(ctx, dbtest.OpenAt(t, dbtest.Monday, db.Options{}), demo.Options{Titles: -1}); stacks.ErrorCode(err) != stacks.EINVALID {
		t.Errorf("Create with -1 titles: %v, want invalid", err)
	}
}

func TestCreateSmall(t *testing.T) {
	d := dbtest.OpenAt(t, dbtest.Monday, db.Options{})
	sum, err := demo.Create(context.Background(), d, demo.Options{Titles: 1, Patrons: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 60 || sum.Patrons != 5 {
		t.Errorf("summary %+v: want the 50-title minimum plus the fixtures, and the 5 fixture patrons", sum)
	}
	if n := queryInt(t, d, `SELECT sum(amount_cents) FROM ledger g JOIN patrons p ON p.id = g.patron_id WHERE p.card = 'P0002'`); n != 1250 {
		t.Errorf("P0002 balance = %d, want 1250", n)
	}
}

// TestCreateDeterministic creates the library three times: twice on one day, at
// different hours, which must give the same data, and once on another day.
func TestCreateDeterministic(t *testing.T) {
	ctx := context.Background()
	opt := demo.Options{Titles: 300, Patrons: 120}
	hash := func(now time.Time) string {
		d := dbtest.OpenAt(t, now, db.Options{})
		if _, err := demo.Create(ctx, d, opt); err != nil {
			t.Fatal(err)
		}
		return dumpHash(t, d)
	}
	morning := hash(dbtest.Monday)
	evening := hash(dbtest.Monday.Add(9*time.Hour + 59*time.Minute))
	if morning != evening {
		t.Errorf("two libraries created on %s differ", dbtest.Monday.Format(time.DateOnly))
	}
	if next := hash(dbtest.Monday.AddDate(0, 0, 1)); next == morning {
		t.Error("libraries created on different days are the same: dates are not relative to the day")
	}
}

// dumpHash hashes every demo table in id order.
func dumpHash(tb testing.TB, d *db.DB) string {
	h := sha256.New()
	for _, table := range []string{"branches", "closed_days", "patron_categories", "item_types", "circ_rules",
		"records", "items", "patrons", "loans", "ledger", "holds"} {
		for _, row := range queryRows(tb, d, `SELECT * FROM `+table+` ORDER BY id`) {
			fmt.Fprintf(h, "%s %q\n", table, row)
		}
	}
	for _, row := range queryRows(tb, d, `SELECT name, value FROM preferences ORDER BY name`) {
		fmt.Fprintf(h, "preferences %q\n", row)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func luhnValid(s string) bool {
	sum := 0
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if (len(s)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func isbnValid(s string) bool {
	if len(s) != 13 {
		return false
	}
	sum := 0
	for i := 0; i < 13; i++ {
		d := int(s[i] - '0')
		if d < 0 || d > 9 {
			return false
		}
		if i%2 == 1 {
			d *= 3
		}
		sum += d
	}
	return sum%10 == 0
}

// BenchmarkCreate measures the default demo library, the one serve --demo makes.
func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		d := dbtest.OpenAt(b, dbtest.Monday, db.Options{})
		b.StartTimer()
		if _, err := demo.Create(ctx, d, demo.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMain(m *testing.M) {
	// bcrypt at its real cost is very slow under the race detector.
	passwords.BcryptCost = bcrypt.MinCost
	os.Exit(dbtest.Main(m))
}
