package patrons

import (
	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Check verifies the invariants of the fines ledger in tx and returns every
// violation found (none is nil). `stacks check` runs it.
//
// A patron's balance is the sum of their ledger rows; nothing else stores it, so
// "the ledger balances" means that each row is what Charge, Pay and Waive would
// have written:
//   - ledger-sign: a charge (overdue, lost, fee) is more than zero, a payment or
//     waiver less than zero;
//   - ledger-overpaid: no payment or waiver took more than was owed, that is,
//     brought the patron's running balance (the rows in the order they were
//     written) below zero;
//   - ledger-loan-patron: a charge for a loan is on the ledger of that loan's
//     patron;
//   - ledger-without-patron: every row belongs to a patron who exists;
//   - ledger-anonymised-loan: no row names an anonymised loan (package privacy
//     takes the loan off the charge when it anonymises it, leaving the amount
//     and the day, so balances do not change; a loan with a charge is not
//     anonymised while its patron owes money).
func Check(tx *db.Tx) ([]stacks.Violation, error) {
	return db.Violations(tx, []db.Invariant{
		{Name: "ledger-sign", Query: `SELECT printf('ledger row %d of patron %s (id %d) is a %s of %s; %s',
				g.id, coalesce(p.card, '?'), g.patron_id, g.kind, printf('%.2f', g.amount_cents / 100.0),
				CASE WHEN g.kind IN ('payment', 'waiver') THEN 'payments and waivers are negative' ELSE 'charges are positive' END)
			FROM ledger g LEFT JOIN patrons p ON p.id = g.patron_id
			WHERE (g.kind IN ('payment', 'waiver') AND g.amount_cents >= 0)
			   OR (g.kind NOT IN ('payment', 'waiver') AND g.amount_cents <= 0)
			ORDER BY g.id`},
		{Name: "ledger-overpaid", Query: `SELECT printf('ledger row %d, a %s of %s, brought the balance of patron %s (id %d) to %s; a payment or waiver may take at most what is owed',
				r.id, r.kind, printf('%.2f', -r.amount_cents / 100.0), coalesce(p.card, '?'), r.patron_id, printf('%.2f', r.running / 100.0))
			FROM (SELECT id, patron_id, kind, amount_cents,
					sum(amount_cents) OVER (PARTITION BY patron_id ORDER BY id ROWS UNBOUNDED PRECEDING) AS running
				FROM ledger) r
			LEFT JOIN patrons p ON p.id = r.patron_id
			WHERE r.kind IN ('payment', 'waiver') AND r.running < 0
			ORDER BY r.id`},
		{Name: "ledger-loan-patron", Query: `SELECT printf('ledger row %d charges patron %s (id %d) for loan %d, which is a loan to patron %s (id %d)',
				g.id, coalesce(p.card, '?'), g.patron_id, g.loan_id, coalesce(lp.card, '?'), l.patron_id)
			FROM ledger g JOIN loans l ON l.id = g.loan_id
			LEFT JOIN patrons p ON p.id = g.patron_id LEFT JOIN patrons lp ON lp.id = l.patron_id
			WHERE l.patron_id <> g.patron_id
			ORDER BY g.id`},
		{Name: "ledger-anonymised-loan", Query: `SELECT printf('ledger row %d of patron %s (id %d) names loan %d, which is anonymised: the charge would tell whose loan it was',
				g.id, coalesce(p.card, '?'), g.patron_id, g.loan_id)
			FROM ledger g JOIN loans l ON l.id = g.loan_id LEFT JOIN patrons p ON p.id = g.patron_id
			WHERE l.patron_id IS NULL
			ORDER BY g.id`},
		{Name: "ledger-without-patron", Query: `SELECT printf('ledger row %d (%s of %s) names patron id %d, who does not exist',
				g.id, g.kind, printf('%.2f', g.amount_cents / 100.0), g.patron_id)
			FROM ledger g WHERE NOT EXISTS (SELECT 1 FROM patrons p WHERE p.id = g.patron_id)
			ORDER BY g.id`},
	})
}
