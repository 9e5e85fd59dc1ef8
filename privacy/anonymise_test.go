package privacy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/privacy"
)

// totals are the statistics anonymisation must not change: loans per item, per
// branch and day issued, per day returned and return branch, per patron
// category (the patron's, or the snapshot of an anonymised loan), checkins per
// day, and each patron's balance.
func totals(tb testing.TB, d *db.DB) map[string][]string {
	tb.Helper()
	return map[string][]string{
		"per item":     queryText(tb, d, `SELECT item_id || ':' || count(*) FROM loans GROUP BY item_id ORDER BY item_id`),
		"per branch":   queryText(tb, d, `SELECT branch_id || ':' || substr(issued_at, 1, 10) || ':' || count(*) FROM loans GROUP BY branch_id, substr(issued_at, 1, 10) ORDER BY 1`),
		"per return":   queryText(tb, d, `SELECT coalesce(return_branch_id, 0) || ':' || coalesce(substr(returned_at, 1, 10), '') || ':' || count(*) FROM loans GROUP BY return_branch_id, substr(returned_at, 1, 10) ORDER BY 1`),
		"per category": queryText(tb, d, `SELECT coalesce(p.category_id, l.patron_category_id) || ':' || count(*) FROM loans l LEFT JOIN patrons p ON p.id = l.patron_id GROUP BY coalesce(p.category_id, l.patron_category_id) ORDER BY 1`),
		"per home":     queryText(tb, d, `SELECT coalesce(p.home_branch_id, l.patron_branch_id) || ':' || count(*) FROM loans l LEFT JOIN patrons p ON p.id = l.patron_id GROUP BY coalesce(p.home_branch_id, l.patron_branch_id) ORDER BY 1`),
		"checkins":     queryText(tb, d, `SELECT substr(at, 1, 10) || ':' || count(*) || ':' || count(loan_id) FROM checkins GROUP BY substr(at, 1, 10) ORDER BY 1`),
		"balances":     queryText(tb, d, `SELECT patron_id || ':' || sum(amount_cents) FROM ledger GROUP BY patron_id ORDER BY patron_id`),
		"ledger days":  queryText(tb, d, `SELECT substr(created_at, 1, 10) || ':' || kind || ':' || sum(amount_cents) FROM ledger GROUP BY substr(created_at, 1, 10), kind ORDER BY 1`),
	}
}

// chargedOwing: loan l has a charge and its patron owes money (such loans wait).
const chargedOwing = `l.id IN (SELECT loan_id FROM ledger WHERE loan_id IS NOT NULL)
	AND l.patron_id IN (SELECT patron_id FROM ledger GROUP BY patron_id HAVING sum(amount_cents) > 0)`

func TestAnonymise(t *testing.T) {
	d := mustOpenDemo(t)
	// The demo's own history is returned within the last weeks: the cutoff is
	// 30 days, so most of it is recent and some not, whichever it is.
	plain := newPatron(t, d, "X9001", "Plainsong", days(900))
	keeper := newPatron(t, d, "X9002", "Keepwell", days(900))
	exec(t, d, `UPDATE patrons SET keep_history = 1 WHERE id = ?`, keeper)
	owing := newPatron(t, d, "X9003", "Owesalot", days(900))
	settled := newPatron(t, d, "X9004", "Paidup", days(900))

	cases := []struct {
		name       string
		loan       int64
		anonymised bool
	}{
		{"OldReturned", addLoan(t, d, plain, days(100), days(80)), true},
		{"JustPastHorizon", addLoan(t, d, plain, days(60), days(31)), true},
		{"Recent", addLoan(t, d, plain, days(40), days(29)), false},
		{"Current", addLoan(t, d, plain, days(200), time.Time{}), false},
		{"KeepHistory", addLoan(t, d, keeper, days(100), days(80)), false},
		{"UnpaidCharge", addLoan(t, d, owing, days(100), days(70)), false},
		{"SettledCharge", addLoan(t, d, settled, days(100), days(70)), true},
	}
	loanOf := map[string]int64{}
	for _, c := range cases {
		loanOf[c.name] = c.loan
	}
	exec(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, description, created_at) VALUES (?, 'overdue', 250, ?, 'Overdue', ?)`,
		owing, loanOf["UnpaidCharge"], db.FormatTime(days(70)))
	settledItem := queryText(t, d, `SELECT r.title || '|' || i.barcode FROM loans l JOIN items i ON i.id = l.item_id JOIN records r ON r.id = i.record_id WHERE l.id = ?`, loanOf["SettledCharge"])[0]
	title, barcode, _ := strings.Cut(settledItem, "|")
	exec(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, description, created_at) VALUES (?, 'overdue', 250, ?, ?, ?)`,
		settled, loanOf["SettledCharge"], fmt.Sprintf("Overdue: %s (%s), 10 days late", title, barcode), db.FormatTime(days(70)))
	exec(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at) VALUES (?, 'payment', -250, 'Cash', ?)`,
		settled, db.FormatTime(days(60)))
	mustCheck(t, d)

	before := totals(t, d)
	wantOld := queryInt(t, d, `SELECT count(*) FROM loans l JOIN patrons p ON p.id = l.patron_id
		WHERE l.returned_at < ? AND p.keep_history = 0 AND NOT (`+chargedOwing+`)`, db.FormatTime(privacy.AnonymiseCutoff(dbtest.Monday, 30)))
	if n := queryInt(t, d, `SELECT count(*) FROM loans l WHERE l.id = ? AND `+chargedOwing, loanOf["UnpaidCharge"]); n != 1 {
		t.Fatal("the unpaid charge's loan is not seen as charged and owing")
	}

	dry, err := privacy.Anonymise(ctx, d, privacy.AnonymiseCutoff(dbtest.Monday, 30), privacy.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if int64(dry.Loans) != wantOld {
		t.Errorf("dry run counts %d loans, want %d", dry.Loans, wantOld)
	}
	if n := queryInt(t, d, `SELECT count(*) FROM loans WHERE patron_id IS NULL`); n != 0 {
		t.Fatalf("the dry run anonymised %d loans", n)
	}

	// A chunk of 7 makes the run take several write transactions.
	res, err := privacy.Anonymise(ctx, d, privacy.AnonymiseCutoff(dbtest.Monday, 30), privacy.Options{Chunk: 7})
	if err != nil {
		t.Fatal(err)
	}
	if int64(res.Loans) != wantOld || wantOld < 3 {
		t.Errorf("anonymised %d loans, want %d (at least the 3 of this test)", res.Loans, wantOld)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			named := queryInt(t, d, `SELECT count(*) FROM loans WHERE id = ? AND patron_id IS NOT NULL`, c.loan)
			if c.anonymised && named != 0 {
				t.Errorf("loan %d still names its patron", c.loan)
			}
			if !c.anonymised && named != 1 {
				t.Errorf("loan %d lost its patron", c.loan)
			}
			if c.anonymised {
				if n := queryInt(t, d, `SELECT count(*) FROM loans WHERE id = ? AND patron_category_id IS NOT NULL AND patron_branch_id IS NOT NULL`, c.loan); n != 1 {
					t.Errorf("loan %d kept no category or branch", c.loan)
				}
			}
		})
	}
	if n := queryInt(t, d, `SELECT count(*) FROM loans l WHERE l.patron_id IS NOT NULL AND l.returned_at < ? AND l.patron_id <> ? AND NOT (`+chargedOwing+`)`,
		db.FormatTime(privacy.AnonymiseCutoff(dbtest.Monday, 30)), keeper); n != 0 {
		t.Errorf("%d old loans still name their patron", n)
	}
	if n := queryInt(t, d, `SELECT count(*) FROM ledger WHERE loan_id = ?`, loanOf["SettledCharge"]); n != 0 {
		t.Errorf("the settled charge still names the anonymised loan")
	}
	if got := queryText(t, d, `SELECT description FROM ledger WHERE patron_id = ? AND (`+instr+`(description, ?) > 0 OR `+instr+`(description, ?) > 0)`, settled, title, barcode); len(got) != 0 {
		t.Errorf("the anonymised loan's title or barcode stays on its patron's ledger: %q", got)
	}
	if got := queryText(t, d, `SELECT description FROM ledger WHERE patron_id = ? AND kind = 'overdue'`, settled); !slices.Equal(got, []string{"Overdue fine"}) {
		t.Errorf("the anonymised loan's charge reads %q, want [Overdue fine]", got)
	}
	if n := queryInt(t, d, `SELECT count(*) FROM ledger WHERE loan_id = ?`, loanOf["UnpaidCharge"]); n != 1 {
		t.Errorf("the unpaid charge lost its loan")
	}
	if got := queryInt(t, d, `SELECT count(*) FROM patrons WHERE id = ? AND anonymised_until = ?`, plain, db.FormatTime(days(31))); got != 1 {
		t.Errorf("the patron's anonymised activity is not the latest anonymised return")
	}
	audit := queryText(t, d, `SELECT detail FROM audit_log WHERE action = 'privacy.anonymise'`)
	if len(audit) != 1 || !strings.HasPrefix(audit[0], fmt.Sprintf("%d loans returned before ", res.Loans)) {
		t.Errorf("audit entries %q, want one with the count", audit)
	}
	for _, name := range []string{"Plainsong", "X9001", "Quintessa"} {
		if strings.Contains(strings.Join(audit, " "), name) {
			t.Errorf("the audit entry names %s", name)
		}
	}

	after := totals(t, d)
	for k, v := range before {
		if !slices.Equal(v, after[k]) {
			t.Errorf("totals %s changed:\nbefore %v\nafter  %v", k, v, after[k])
		}
	}
	mustCheck(t, d)

	t.Run("Idempotent", func(t *testing.T) {
		snapshot := queryText(t, d, `SELECT id || ':' || coalesce(CAST(patron_id AS TEXT), '-') || ':' || coalesce(CAST(patron_category_id AS TEXT), '-') FROM loans ORDER BY id`)
		again, err := privacy.Anonymise(ctx, d, privacy.AnonymiseCutoff(dbtest.Monday, 30), privacy.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if again.Loans != 0 {
			t.Errorf("a second run anonymised %d loans", again.Loans)
		}
		if got := queryText(t, d, `SELECT id || ':' || coalesce(CAST(patron_id AS TEXT), '-') || ':' || coalesce(CAST(patron_category_id AS TEXT), '-') FROM loans ORDER BY id`); !slices.Equal(snapshot, got) {
			t.Error("a second run changed the loans")
		}
	})

	t.Run("SettledLater", func(t *testing.T) {
		exec(t, d, `INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at) VALUES (?, 'payment', -250, 'Cash', ?)`,
			owing, db.FormatTime(days(1)))
		if _, err := privacy.Anonymise(ctx, d, privacy.AnonymiseCutoff(dbtest.Monday, 30), privacy.Options{}); err != nil {
			t.Fatal(err)
		}
		if n := queryInt(t, d, `SELECT count(*) FROM loans WHERE id = ? AND patron_id IS NULL`, loanOf["UnpaidCharge"]); n != 1 {
			t.Error("the loan whose charge is now paid was not anonymised")
		}
		mustCheck(t, d)
	})
}
