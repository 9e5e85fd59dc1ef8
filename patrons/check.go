package patrons

import (
	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Check verifies the invariants of the fines ledger in tx and returns every
// violation found (none is nil). `stacks check` runs it.
//
// A patron's balance is the sum of their ledger rows; nothing else stores it, so
// "the ledger balances" means that each row is what Charge, PayLines, WaiveLines,
// Refund and ReverseCharge would have written:
//   - ledger-sign: a charge (overdue, lost, processing, fee, manual) or a refund is
//     more than zero, a payment, waiver, void or credit less than zero;
//   - ledger-overpaid: no payment or waiver took more than was owed, that is,
//     brought the patron's running balance (the rows in the order they were
//     written) below zero;
//   - ledger-refund-over-credit: no refund handed back more than the patron's
//     credit (brought the running balance above zero);
//   - ledger-loan-patron: a charge for a loan is on the ledger of that loan's
//     patron;
//   - ledger-without-patron: every row belongs to a patron who exists (a row whose
//     patron was purged has no patron, and is settled history);
//   - ledger-allocation: a payment's (waiver's, re-used credit's) allocations add
//     up to at most its amount, each
//     to a charge of the same patron, and no charge is paid more than its amount;
//   - ledger-reversal: a void or credit reverses a charge of the same patron, and
//     the reversals of a charge add up to at most its amount;
//   - ledger-credit-over-paid: the credits reversing a charge add up to at most
//     the money allocated to it (payments, and credits re-used to pay it): a
//     waiver is never given back;
//   - ledger-desk: a payment or refund with a method names the desk's branch, and
//     only payments and refunds have a method;
//   - lost-loan-billed-once: a loan has at most one lost and one processing line.
//   - ledger-anonymised-loan: no row names an anonymised loan (package privacy
//     takes the loan off the charge when it anonymises it, leaving the amount
//     and the day, so balances do not change; a loan with a charge is not
//     anonymised while its patron owes money).
func Check(tx *db.Tx) ([]stacks.Violation, error) {
	const reversing = `('payment', 'waiver', 'void', 'credit')`
	const charges = `('overdue', 'lost', 'processing', 'fee', 'manual')`
	return db.Violations(tx, []db.Invariant{
		{Name: "ledger-sign", Query: `SELECT 'ledger row ' || g.id || ' of patron ' || coalesce(p.card, '?') || ' (id ' || coalesce(g.patron_id, 0)
				|| ') is a ' || g.kind || ' of ' || ` + moneySQL("g.amount_cents") + ` || '; ' ||
				CASE WHEN g.kind IN ` + reversing + ` THEN 'payments, waivers, voids and credits are negative' ELSE 'charges and refunds are positive' END
			FROM ledger g LEFT JOIN patrons p ON p.id = g.patron_id
			WHERE (g.kind IN ` + reversing + ` AND g.amount_cents >= 0)
			   OR (g.kind NOT IN ` + reversing + ` AND g.amount_cents <= 0)
			ORDER BY g.id`},
		{Name: "ledger-overpaid", Query: `SELECT 'ledger row ' || r.id || ', a ' || r.kind || ' of ' || ` + moneySQL("-r.amount_cents") + `
				|| ', brought the balance of patron ' || coalesce(p.card, '?') || ' (id ' || r.patron_id || ') to ' || ` + moneySQL("r.running") + `
				|| '; a payment or waiver may take at most what is owed'
			FROM (SELECT id, patron_id, kind, amount_cents,
					sum(amount_cents) OVER (PARTITION BY patron_id ORDER BY id ROWS UNBOUNDED PRECEDING) AS running
				FROM ledger WHERE patron_id IS NOT NULL) r
			LEFT JOIN patrons p ON p.id = r.patron_id
			WHERE r.kind IN ('payment', 'waiver') AND r.running < 0
			ORDER BY r.id`},
		{Name: "ledger-refund-over-credit", Query: `SELECT 'ledger row ' || r.id || ', a refund of ' || ` + moneySQL("r.amount_cents") + `
				|| ', brought the balance of patron ' || coalesce(p.card, '?') || ' (id ' || r.patron_id || ') to ' || ` + moneySQL("r.running") + `
				|| '; a refund may hand back at most the credit'
			FROM (SELECT id, patron_id, kind, amount_cents,
					sum(amount_cents) OVER (PARTITION BY patron_id ORDER BY id ROWS UNBOUNDED PRECEDING) AS running
				FROM ledger WHERE patron_id IS NOT NULL) r
			LEFT JOIN patrons p ON p.id = r.patron_id
			WHERE r.kind = 'refund' AND r.running > 0
			ORDER BY r.id`},
		{Name: "ledger-loan-patron", Query: `SELECT 'ledger row ' || g.id || ' charges patron ' || coalesce(p.card, '?') || ' (id ' || g.patron_id
				|| ') for loan ' || g.loan_id || ', which is a loan to patron ' || coalesce(lp.card, '?') || ' (id ' || l.patron_id || ')'
			FROM ledger g JOIN loans l ON l.id = g.loan_id
			LEFT JOIN patrons p ON p.id = g.patron_id LEFT JOIN patrons lp ON lp.id = l.patron_id
			WHERE l.patron_id <> g.patron_id
			ORDER BY g.id`},
		{Name: "ledger-anonymised-loan", Query: `SELECT 'ledger row ' || g.id || ' of patron ' || coalesce(p.card, '?') || ' (id ' || coalesce(g.patron_id, 0)
				|| ') names loan ' || g.loan_id || ', which is anonymised: the charge would tell whose loan it was'
			FROM ledger g JOIN loans l ON l.id = g.loan_id LEFT JOIN patrons p ON p.id = g.patron_id
			WHERE l.patron_id IS NULL
			ORDER BY g.id`},
		{Name: "ledger-without-patron", Query: `SELECT 'ledger row ' || g.id || ' (' || g.kind || ' of ' || ` + moneySQL("g.amount_cents") + `
				|| ') names patron id ' || g.patron_id || ', who does not exist'
			FROM ledger g WHERE g.patron_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM patrons p WHERE p.id = g.patron_id)
			ORDER BY g.id`},
		{Name: "ledger-allocation", Query: `SELECT 'payment ' || y.id || ' (' || y.kind || ', ' || ` + moneySQL("-y.amount_cents") + `
				|| ') allocates ' || ` + moneySQL("sum(a.amount_cents)") + ` || ' to charges' ||
				CASE WHEN max(CASE WHEN c.patron_id IS DISTINCT FROM y.patron_id THEN 1 ELSE 0 END) = 1 THEN ' of another patron'
				     WHEN max(CASE WHEN c.kind NOT IN ` + charges + ` THEN 1 ELSE 0 END) = 1 THEN ' and to lines that are not charges'
				     ELSE ', more than it paid' END
			FROM ledger_allocations a JOIN ledger y ON y.id = a.payment_id JOIN ledger c ON c.id = a.charge_id
			GROUP BY y.id
			HAVING sum(a.amount_cents) > -y.amount_cents OR max(CASE WHEN c.patron_id IS DISTINCT FROM y.patron_id THEN 1 ELSE 0 END) = 1
			    OR max(CASE WHEN c.kind NOT IN ` + charges + ` THEN 1 ELSE 0 END) = 1 OR y.kind NOT IN ('payment', 'waiver', 'credit')
			UNION ALL
			SELECT 'charge ' || c.id || ' (' || c.kind || ' of ' || ` + moneySQL("c.amount_cents") + `
				|| ') is paid ' || ` + moneySQL("sum(a.amount_cents)") + ` || ' by allocations, more than its amount'
			FROM ledger_allocations a JOIN ledger c ON c.id = a.charge_id
			GROUP BY c.id HAVING sum(a.amount_cents) > c.amount_cents`},
		{Name: "ledger-reversal", Query: `SELECT 'ledger row ' || v.id || ' (' || v.kind || ' of ' || ` + moneySQL("-v.amount_cents") + `
				|| ') reverses row ' || coalesce(v.reverses_id, 0) || ', ' ||
				CASE WHEN v.reverses_id IS NULL THEN 'which is missing' WHEN c.id IS NULL THEN 'which does not exist'
				     WHEN c.patron_id IS DISTINCT FROM v.patron_id THEN 'a line of another patron' ELSE 'which is not a charge' END
			FROM ledger v LEFT JOIN ledger c ON c.id = v.reverses_id
			WHERE v.kind IN ('void', 'credit') AND (c.id IS NULL OR c.patron_id IS DISTINCT FROM v.patron_id
				OR c.kind NOT IN ` + charges + `)
			UNION ALL
			SELECT 'charge ' || c.id || ' (' || c.kind || ' of ' || ` + moneySQL("c.amount_cents") + `
				|| ') is reversed ' || ` + moneySQL("-sum(v.amount_cents)") + ` || ', more than its amount'
			FROM ledger v JOIN ledger c ON c.id = v.reverses_id
			GROUP BY c.id HAVING -sum(v.amount_cents) > c.amount_cents`},
		{Name: "ledger-credit-over-paid", Query: `SELECT 'charge ' || c.id || ' (' || c.kind || ' of ' || ` + moneySQL("c.amount_cents") + `
				|| ', patron ' || coalesce(p.card, '?') || ') is credited back ' || ` + moneySQL("r.credited") + ` || ', but only '
				|| ` + moneySQL(`coalesce((SELECT sum(a.amount_cents) FROM ledger_allocations a JOIN ledger y ON y.id = a.payment_id
					WHERE a.charge_id = c.id AND y.kind IN ('payment', 'credit')), 0)`) + `
				|| ' was paid toward it; a waiver is never given back'
			FROM (SELECT reverses_id, -sum(amount_cents) AS credited FROM ledger WHERE kind = 'credit' AND reverses_id IS NOT NULL GROUP BY reverses_id) r
			JOIN ledger c ON c.id = r.reverses_id LEFT JOIN patrons p ON p.id = c.patron_id
			WHERE r.credited > coalesce((SELECT sum(a.amount_cents) FROM ledger_allocations a JOIN ledger y ON y.id = a.payment_id
				WHERE a.charge_id = c.id AND y.kind IN ('payment', 'credit')), 0)
			ORDER BY c.id`},
		{Name: "ledger-desk", Query: `SELECT 'ledger row ' || g.id || ' (' || g.kind || ' of ' || ` + moneySQL("abs(g.amount_cents)") + `
				|| ') ' || CASE WHEN g.kind NOT IN ('payment', 'refund') THEN 'has a payment method, but only payments and refunds have one'
				     ELSE 'has a payment method but no desk branch' END
			FROM ledger g
			WHERE g.payment_method IS NOT NULL AND (g.kind NOT IN ('payment', 'refund') OR g.branch_id IS NULL)
			ORDER BY g.id`},
		{Name: "lost-loan-billed-once", Query: `SELECT 'loan ' || loan_id || ' has ' || count(*) || ' ' || kind || ' lines; a lost loan is billed once'
			FROM ledger WHERE kind IN ('lost', 'processing') AND loan_id IS NOT NULL
			GROUP BY loan_id, kind HAVING count(*) > 1`},
	})
}

// moneySQL is an SQL expression formatting the integer amount of cents the
// expression cents gives as 12.50 or -0.05, the way printf('%.2f', cents / 100.0)
// does in SQLite, in SQL that PostgreSQL runs too (it has no printf, and sum of a
// bigint is numeric there, hence the cast).
func moneySQL(cents string) string {
	c := "CAST(" + cents + " AS BIGINT)"
	return "(CASE WHEN " + c + " < 0 THEN '-' ELSE '' END || CAST(abs(" + c + ") / 100 AS TEXT) || '.' || substr(CAST(100 + abs(" + c + ") % 100 AS TEXT), 2))"
}
