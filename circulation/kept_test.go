package circulation_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
)

// TestCheckoutKept runs the checkout tests with the service keeping the
// rules and calendars in memory, as a server's does.
func TestCheckoutKept(t *testing.T) {
	keepCirculation = true
	defer func() { keepCirculation = false }()
	TestCheckout(t)
}

// TestKeptCirculation: a server that keeps the rules and calendars uses a
// changed rule and a new closed day at the next checkout (the circulation
// version moves with them), and resolves the same rule as the query does for
// every patron category, item type and branch.
func TestKeptCirculation(t *testing.T) {
	keepCirculation = true
	defer func() { keepCirculation = false }()
	e := newEnv(t)
	// Monday 30 November + 21 days: Monday 21 December at closing.
	if due, want := e.mustCheckout("P0001", "I00001").Loan.DueAt, at("2026-12-21 20:00"); !due.Equal(want) {
		t.Fatalf("first checkout due %s, want %s", due, want)
	}
	e.exec(`UPDATE circ_rules SET loan_period = 7 WHERE item_type_id = 1 AND patron_category_id IS NULL AND branch_id IS NULL`)
	if due, want := e.mustCheckout("P0001", "I00002").Loan.DueAt, at("2026-12-07 20:00"); !due.Equal(want) {
		t.Fatalf("after the rule changed to 7 days: due %s, want %s (a kept rule not read again?)", due, want)
	}
	e.exec(`INSERT INTO closed_days (branch_id, day, description) VALUES (1, '2026-12-07', 'Staff training')`)
	if due, want := e.mustCheckout("P0001", "I00003").Loan.DueAt, at("2026-12-08 20:00"); !due.Equal(want) {
		t.Fatalf("after 7 December closed: due %s, want %s (a kept calendar not read again?)", due, want)
	}

	// The rule in memory is the query's, for every scope (and one of each
	// that no rule names).
	e.exec(`INSERT INTO circ_rules (patron_category_id, item_type_id, branch_id, loan_period, loan_unit, max_loans, renewals, fine_cents, fine_cap_cents)
		VALUES (1, 1, 2, 3, 'days', 5, 0, 10, 100)`)
	e.exec(`INSERT INTO circ_rules (patron_category_id, branch_id, loan_period, loan_unit, max_loans, renewals, fine_cents, fine_cap_cents)
		VALUES (2, 1, 4, 'days', 5, 0, 10, 100)`)
	ids := func(table string) []int64 {
		var out []int64
		for _, s := range e.queryStrings(`SELECT CAST(id AS TEXT) FROM ` + table + ` ORDER BY id`) {
			var id int64
			for _, c := range s {
				id = id*10 + int64(c-'0')
			}
			out = append(out, id)
		}
		return append(out, 9999)
	}
	cats, types, branches := ids("patron_categories"), ids("item_types"), ids("branches")
	err := e.d.Read(context.Background(), func(tx *db.Tx) error {
		rules, err := circulation.ListRules(tx)
		if err != nil {
			return err
		}
		checked := 0
		for _, c := range cats {
			for _, it := range types {
				for _, b := range branches {
					want, werr := circulation.ResolveRule(tx, c, it, b)
					got, gerr := circulation.ResolveAmong(rules, c, it, b)
					if want.ID != got.ID || (werr == nil) != (gerr == nil) {
						t.Errorf("category %d, item type %d, branch %d: kept rule %d (%v), the query's %d (%v)", c, it, b, got.ID, gerr, want.ID, werr)
					}
					checked++
				}
			}
		}
		t.Logf("%d scopes resolved alike", checked)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
