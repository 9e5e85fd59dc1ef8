package privacy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/privacy"
)

// person is what the gone-from-every-table test looks for.
type person struct {
	id                          int64
	card, surname, email, phone string
}

// richPatron adds a patron inactive for four years with a row in every table
// that can hold one about them: a returned loan with its checkin, a settled
// charge, a fulfilled hold that a checkin trapped, notices and notice
// preferences, a patrons'-site session, a PIN lockout, a sign-in throttle, and
// audit entries that name them.
func richPatron(tb testing.TB, d *db.DB, card, surname string) person {
	tb.Helper()
	old := days(4 * 366)
	id := newPatron(tb, d, card, surname, old.AddDate(-1, 0, 0))
	p := person{id: id, card: card, surname: surname}
	err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT email, phone FROM patrons WHERE id = ?`, id).Scan(&p.email, &p.phone)
	})
	if err != nil {
		tb.Fatal(err)
	}
	loan := addLoan(tb, d, id, old.AddDate(0, 0, -20), old)
	ts := db.FormatTime(old)
	exec(tb, d, `INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, description, created_at) VALUES (?, 'overdue', 150, ?, 'Overdue', ?)`, id, loan, ts)
	exec(tb, d, `INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at, payment_method, branch_id) VALUES (?, 'payment', -150, 'Cash from '||?, ?, 'cash', 1)`, id, surname, ts)
	rec := queryInt(tb, d, `SELECT r.id FROM records r JOIN items i ON i.record_id = r.id ORDER BY r.id LIMIT 1`)
	holdID := insertID(tb, d, `INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status, closed_at)
		VALUES (?, ?, 1, ?, 0, 'fulfilled', ?)`, rec, id, ts, ts)
	exec(tb, d, `INSERT INTO checkins (at, item_id, branch_id, actor, hold_id) VALUES (?, (SELECT min(id) FROM items), 1, 'desk', ?)`, ts, holdID)
	// A checkin that ended one of their holds, expired on the hold shelf.
	exec(tb, d, `INSERT INTO checkins (at, item_id, branch_id, actor, expired_hold_id) VALUES (?, (SELECT min(id) FROM items), 1, 'desk', ?)`, ts, holdID)
	msgID := insertID(tb, d, `INSERT INTO notice_messages (patron_id, delivery, branch_id, library_day, to_address, subject, body_text, body_html, status, next_attempt_at, created_at)
		VALUES (?, 'email', 1, ?, ?, 'Your hold', 'Dear '||?||', card '||?, '<p>Dear '||?||'</p>', 'sent', ?, ?)`,
		id, ts[:10], p.email, surname, card, surname, ts, ts)
	exec(tb, d, `INSERT INTO notice_items (trigger, object_id, patron_id, library_day, created_at, delivery, message_id) VALUES ('hold_available', ?, ?, ?, ?, 'email', ?)`,
		holdID, id, ts[:10], ts, msgID)
	exec(tb, d, `INSERT INTO notice_preferences (patron_id, kind, delivery) VALUES (?, 'predue', 'print')`, id)
	exec(tb, d, `INSERT INTO opac_sessions (token_hash, data, expiry) VALUES (?, ?, '2099-01-01T00:00:00Z')`,
		"hash-"+card, fmt.Sprintf(`{"d":"2099-01-01T00:00:00Z","i":{"pid":%d}}`, id))
	exec(tb, d, `INSERT INTO login_throttle (key, failures, first_at) VALUES (?, 2, ?)`, fmt.Sprintf("pin:%d", id), ts)
	exec(tb, d, `INSERT INTO login_throttle (key, failures, first_at) VALUES (?, 1, ?)`, "card:"+card, ts)
	for _, a := range [][4]any{
		{"desk", "patron.create", "patron", fmt.Sprintf("%s Quintessa %s, %s", card, surname, p.email)},
		{"opac:" + card, "patron.signin", "patron", "from 192.0.2.1"},
		{"desk", "hold.trap", "hold", "item I00001 for " + card},
		{"desk", "checkout.override", "loan", "for Quintessa " + surname + " (" + card + "), phone " + p.phone},
	} {
		obj := id
		if a[2] == "hold" {
			obj = holdID
		} else if a[2] == "loan" {
			obj = loan
		}
		exec(tb, d, `INSERT INTO audit_log (at, actor, action, object_type, object_id, detail) VALUES (?, ?, ?, ?, ?, ?)`, ts, a[0], a[1], a[2], obj, a[3])
	}
	return p
}

func TestPurgeInactive(t *testing.T) {
	d := mustOpenDemo(t)
	cutoff := privacy.PurgeCutoff(dbtest.Monday, 3)
	eligible := richPatron(t, d, "X9100", "Zyxwvutsson")

	// Each other patron is old and quiet like the eligible one, but for one
	// reason to stay.
	cases := []struct {
		name  string
		setup func(id int64)
	}{
		{"Owes", func(id int64) {
			exec(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at) VALUES (?, 'fee', 100, 'Card', ?)`, id, db.FormatTime(days(2000)))
		}},
		{"CurrentLoan", func(id int64) { addLoan(t, d, id, days(1500), time.Time{}) }},
		{"OpenHold", func(id int64) {
			exec(t, d, `INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status) VALUES ((SELECT max(id) FROM records), ?, 1, ?, 1, 'queued')`, id, db.FormatTime(days(1500)))
		}},
		{"RecentReturn", func(id int64) { addLoan(t, d, id, days(300), days(280)) }},
		{"RecentAnonymisedReturn", func(id int64) {
			exec(t, d, `UPDATE patrons SET anonymised_until = ? WHERE id = ?`, db.FormatTime(days(200)), id)
		}},
		{"RecentPayment", func(id int64) {
			exec(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at) VALUES (?, 'fee', 100, 'Card', ?)`, id, db.FormatTime(days(400)))
			exec(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at) VALUES (?, 'payment', -100, 'Cash', ?)`, id, db.FormatTime(days(300)))
		}},
		{"RecentSignIn", func(id int64) {
			exec(t, d, `INSERT INTO audit_log (at, actor, action, object_type, object_id) VALUES (?, 'opac:x', 'patron.signin', 'patron', ?)`, db.FormatTime(days(30)), id)
		}},
		{"RecentHold", func(id int64) {
			exec(t, d, `INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status, closed_at) VALUES ((SELECT min(id) FROM records), ?, 1, ?, 0, 'cancelled', ?)`,
				id, db.FormatTime(days(400)), db.FormatTime(days(390)))
		}},
		{"ValidCard", func(id int64) {
			exec(t, d, `UPDATE patrons SET expires_on = ? WHERE id = ?`, dbtest.Monday.AddDate(0, 1, 0).Format("2006-01-02"), id)
		}},
		{"CardExpiredAfterCutoff", func(id int64) {
			exec(t, d, `UPDATE patrons SET expires_on = ? WHERE id = ?`, cutoff.AddDate(0, 0, 10).Format("2006-01-02"), id)
		}},
		{"NewCard", func(id int64) {
			exec(t, d, `UPDATE patrons SET created_at = ? WHERE id = ?`, db.FormatTime(days(100)), id)
		}},
	}
	kept := map[string]int64{}
	for i, c := range cases {
		id := newPatron(t, d, fmt.Sprintf("X92%02d", i), "Stays"+c.name, days(2000))
		c.setup(id)
		kept[c.name] = id
	}
	mustCheck(t, d)
	cashUps := cashUpTotals(t, d)

	dry, err := privacy.PurgeInactive(ctx, d, cutoff, privacy.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry != 1 {
		t.Errorf("the dry run counts %d patrons, want 1", dry)
	}
	n, err := privacy.PurgeInactive(ctx, d, cutoff, privacy.Options{Chunk: 10})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("purged %d patrons, want 1", n)
	}
	for name, id := range kept {
		t.Run("Kept"+name, func(t *testing.T) {
			if queryInt(t, d, `SELECT count(*) FROM patrons WHERE id = ?`, id) != 1 {
				t.Errorf("patron %d was purged", id)
			}
		})
	}
	t.Run("GoneFromEveryTable", func(t *testing.T) { assertGone(t, d, eligible) })
	t.Run("CashUpsUnchanged", func(t *testing.T) {
		if after := cashUpTotals(t, d); !slices.Equal(cashUps, after) {
			t.Errorf("the cash-ups changed:\nbefore %v\nafter  %v", cashUps, after)
		}
	})
	if got := queryText(t, d, `SELECT detail FROM audit_log WHERE action = 'patron.purge' AND object_id = ?`, eligible.id); len(got) != 1 {
		t.Errorf("purge audit entries %q, want one", got)
	}
	if n := queryInt(t, d, `SELECT count(*) FROM checkins WHERE loan_id IS NOT NULL AND loan_id IN (SELECT id FROM loans WHERE patron_id IS NULL)`); n == 0 {
		t.Error("the purged patron's loan and its checkin are not kept for the statistics")
	}
	mustCheck(t, d)
	if again, err := privacy.PurgeInactive(ctx, d, cutoff, privacy.Options{}); err != nil || again != 0 {
		t.Errorf("a second purge: %d, %v; want 0, nil", again, err)
	}
}

// cashUpTotals is each past day's cash-up, per desk and method: what a purge
// must never change. It must include the purged patron's payment.
func cashUpTotals(tb testing.TB, d *db.DB) []string {
	tb.Helper()
	got := queryText(tb, d, `SELECT substr(created_at, 1, 10) || ':' || coalesce(branch_id, 0) || ':' || payment_method || ':' || sum(amount_cents) || ':' || count(*)
		FROM ledger WHERE payment_method IS NOT NULL GROUP BY substr(created_at, 1, 10), branch_id, payment_method ORDER BY 1`)
	if len(got) == 0 {
		tb.Fatal("no cash-up to compare")
	}
	return got
}

// assertGone enumerates the schema (every table, every column) and fails if a
// column that references patrons, or is named patron_id, holds p's id, or if
// any column holds p's card, surname, email or phone as text.
//
// The schema's catalogue is engine-specific, so assertGone reads the one of
// the engine it runs on (dbtest.Engine, schemaSQL): sqlite_master and its
// pragmas on SQLite, pg_catalog on PostgreSQL, where a bytea column (the
// sessions' data) is searched as its escaped text, not its hex.
func assertGone(t *testing.T, d *db.DB, p person) {
	t.Helper()
	q := schemaSQL[dbtest.Engine()]
	tables := queryText(t, d, q.tables)
	if len(tables) < 20 {
		t.Fatalf("only %d tables found: %v", len(tables), tables)
	}
	searched := 0
	for _, table := range tables {
		refs := map[string]bool{}
		for _, col := range queryText(t, d, q.patronRefs, table) {
			refs[col] = true
		}
		for _, col := range queryText(t, d, q.columns, table) {
			quoted := `"` + strings.ReplaceAll(table, `"`, `""`) + `"."` + strings.ReplaceAll(col, `"`, `""`) + `"`
			from := ` FROM "` + strings.ReplaceAll(table, `"`, `""`) + `"`
			if refs[col] || col == "patron_id" {
				if n := queryInt(t, d, `SELECT count(*)`+from+` WHERE `+quoted+` = ?`, p.id); n != 0 {
					t.Errorf("%s.%s holds the purged patron's id %d in %d rows", table, col, p.id, n)
				}
			}
			for _, s := range []string{p.card, p.surname, p.email, p.phone} {
				if n := queryInt(t, d, `SELECT count(*)`+from+` WHERE `+fmt.Sprintf(q.contains, quoted)+` > 0`, s); n != 0 {
					t.Errorf("%s.%s holds %q in %d rows", table, col, s, n)
				}
			}
			searched++
		}
	}
	if searched < 100 {
		t.Errorf("searched only %d columns", searched)
	}
}

// schemaSQL is, per engine, how assertGone reads the schema: the tables, the
// columns of the table given as the parameter that reference patrons, all its
// columns, and an expression (a format with the quoted column for %s) giving
// the position of the parameter in the column's value as text (0 if absent).
var schemaSQL = map[db.Engine]struct{ tables, patronRefs, columns, contains string }{
	db.SQLite: {
		tables:     `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
		patronRefs: `SELECT "from" FROM pragma_foreign_key_list(?) WHERE "table" = 'patrons'`,
		columns:    `SELECT name FROM pragma_table_info(?)`,
		contains:   `instr(CAST(%s AS TEXT), ?)`,
	},
	db.Postgres: {
		tables: `SELECT c.relname FROM pg_class c WHERE c.relkind IN ('r', 'p') AND c.relnamespace = current_schema()::regnamespace
			ORDER BY c.relname`,
		patronRefs: `SELECT a.attname FROM pg_constraint k
			JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey)
			WHERE k.contype = 'f' AND k.conrelid = CAST(? AS regclass) AND k.confrelid = CAST('patrons' AS regclass)`,
		columns: `SELECT a.attname FROM pg_attribute a WHERE a.attrelid = CAST(? AS regclass) AND a.attnum > 0 AND NOT a.attisdropped
			ORDER BY a.attnum`,
		contains: `strpos(CASE WHEN pg_typeof(%[1]s) = CAST('bytea' AS regtype) THEN encode(CAST(CAST(%[1]s AS TEXT) AS bytea), 'escape') ELSE CAST(%[1]s AS TEXT) END, ?)`,
	},
}

func TestPurgeByStaff(t *testing.T) {
	d := mustOpenDemo(t)
	admin := stacks.Actor{Name: "admin", StaffID: queryInt(t, d, `SELECT id FROM staff_users WHERE username = 'admin'`)}
	purge := func(id int64) error {
		return privacy.Purge(ctx, d, admin, id)
	}
	t.Run("ErrOwes", func(t *testing.T) {
		err := purge(queryInt(t, d, `SELECT id FROM patrons WHERE card = 'P0002'`))
		if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "owes 12.50") {
			t.Errorf("err = %v, want refused because they owe 12.50", err)
		}
	})
	t.Run("ErrInCredit", func(t *testing.T) {
		id := newPatron(t, d, "X9303", "Increditt", days(10))
		// A lost item's replacement cost, paid, then credited back when the
		// item came home.
		charge := insertID(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at) VALUES (?, 'lost', 300, 'Lost item', ?)`, id, db.FormatTime(days(4)))
		// The payment paid that line (its allocation), as the desk records it:
		// only money paid toward a charge is credited back (stacks check's
		// ledger-credit-over-paid).
		payment := insertID(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at, payment_method, branch_id) VALUES (?, 'payment', -300, 'Payment', ?, 'cash', 1)`, id, db.FormatTime(days(3)))
		exec(t, d, `INSERT INTO ledger_allocations (payment_id, charge_id, amount_cents) VALUES (?, ?, 300)`, payment, charge)
		exec(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at, reverses_id) VALUES (?, 'credit', -300, 'Credited', ?, ?)`, id, db.FormatTime(days(2)), charge)
		err := purge(id)
		if msg := stacks.ErrorMessage(err); stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(msg, "is in credit 3.00") || !strings.Contains(msg, "refund it first") || strings.Contains(msg, "owes") {
			t.Errorf("err = %v, want refused because they are in credit 3.00, to refund first", err)
		}
	})
	t.Run("ErrLoans", func(t *testing.T) {
		id := newPatron(t, d, "X9301", "Borrower", days(10))
		addLoan(t, d, id, days(3), time.Time{})
		err := purge(id)
		if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "checked out") {
			t.Errorf("err = %v, want refused because of the loan", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if err := purge(999999); stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("err = %v, want not found", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		// Active patrons too: staff purge on request, whatever the activity.
		p := richPatron(t, d, "X9302", "Wolkenkratzer")
		exec(t, d, `INSERT INTO audit_log (at, actor, action, object_type, object_id) VALUES (?, 'opac:X9302', 'patron.signin', 'patron', ?)`, db.FormatTime(days(1)), p.id)
		if err := purge(p.id); err != nil {
			t.Fatal(err)
		}
		assertGone(t, d, p)
		mustCheck(t, d)
	})
}

// TestPurgeAuditOthers: a purge takes the patron's card, full name, email and
// phone out of other entries only as whole tokens, and rewrites no actor but
// the patrons' site's own for that card. A short surname, a phone of "-" and a
// card that begins another card leave other people's entries alone.
func TestPurgeAuditOthers(t *testing.T) {
	d := mustOpenDemo(t)
	admin := stacks.Actor{Name: "admin", StaffID: queryInt(t, d, `SELECT id FROM staff_users WHERE username = 'admin'`)}
	gone := newPatron(t, d, "Q001", "Li", days(10))
	exec(t, d, `UPDATE patrons SET first_name = 'Al', phone = '-', email = 'al.li@example.org' WHERE id = ?`, gone)
	other := newPatron(t, d, "Q0012", "Lindqvist", days(10))
	ts := db.FormatTime(days(5))
	type entry struct{ actor, detail string }
	unrelated := []entry{
		{"desk", "for Quintessa Lindqvist (Q0012), phone 01632-960001"},
		{"opac:Q0012", "from 192.0.2.1 on 2026-11-25"},
		{"desk", "item I00001 for Q0012; Al Lister asked - twice"},
		{"Li", "Linda Li-Smith renewed Lima's loan"},
		{"desk", "card AQ001 and Q001X and Q0010 are other people's"},
	}
	named := []struct{ before, after entry }{
		{entry{"desk", "checkout override for Al Li (Q001), al.li@example.org"}, entry{"desk", "checkout override for [purged] ([purged]), [purged]"}},
		{entry{"opac:Q001", "hold placed"}, entry{"opac:[purged]", "hold placed"}},
		{entry{"desk", "Q001 and Q0012 swapped cards"}, entry{"desk", "[purged] and Q0012 swapped cards"}},
	}
	add := func(e entry) int64 {
		return insertID(t, d, `INSERT INTO audit_log (at, actor, action, object_type, object_id, detail) VALUES (?, ?, 'test', 'loan', ?, ?)`, ts, e.actor, other, e.detail)
	}
	var unrelatedIDs, namedIDs []int64
	for _, e := range unrelated {
		unrelatedIDs = append(unrelatedIDs, add(e))
	}
	for _, e := range named {
		namedIDs = append(namedIDs, add(e.before))
	}
	if err := privacy.Purge(ctx, d, admin, gone); err != nil {
		t.Fatal(err)
	}
	read := func(id int64) entry {
		var e entry
		if err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT actor, detail FROM audit_log WHERE id = ?`, id).Scan(&e.actor, &e.detail)
		}); err != nil {
			t.Fatal(err)
		}
		return e
	}
	for i, id := range unrelatedIDs {
		if got := read(id); got != unrelated[i] {
			t.Errorf("an unrelated entry changed: %q → %q", unrelated[i], got)
		}
	}
	for i, id := range namedIDs {
		if got := read(id); got != named[i].after {
			t.Errorf("entry %q scrubbed to %q, want %q", named[i].before, got, named[i].after)
		}
	}
}

// TestPurgeExportIsNotActivity: staff exporting a patron's data is not the
// patron's activity; a patron load updating them is (the school says they are
// current).
func TestPurgeExportIsNotActivity(t *testing.T) {
	d := mustOpenDemo(t)
	exported := newPatron(t, d, "X9401", "Exportedd", days(2000))
	loaded := newPatron(t, d, "X9402", "Loadedd", days(2000))
	exec(t, d, `INSERT INTO audit_log (at, actor, action, object_type, object_id, detail) VALUES (?, 'desk', 'patron.export', 'patron', ?, 'export')`, db.FormatTime(days(3)), exported)
	exec(t, d, `INSERT INTO audit_log (at, actor, action, object_type, object_id, detail) VALUES (?, 'system', 'patron.update', 'patron', ?, 'category (patron load)')`, db.FormatTime(days(3)), loaded)
	n, err := privacy.PurgeInactive(ctx, d, privacy.PurgeCutoff(dbtest.Monday, 3), privacy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || queryInt(t, d, `SELECT count(*) FROM patrons WHERE id = ?`, exported) != 0 || queryInt(t, d, `SELECT count(*) FROM patrons WHERE id = ?`, loaded) != 1 {
		t.Errorf("purged %d; want the exported patron purged and the loaded one kept", n)
	}
}
