package circulation

import (
	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Check verifies the invariants of loans against the items they lend, in tx, and
// returns every violation found (none is nil). `stacks check` runs it, after a
// crash or on a restored backup; the circulation code keeps these true in each of
// its transactions, so any violation means data was changed outside it or lost.
//
// The invariants:
//   - loan-item-not-on-loan: a current loan's item has the status on_loan (an item
//     is never both available, or on the shelf in any other way, and on loan), or
//     lost when the loan is declared lost;
//   - lost-loan-not-billed: a current loan declared lost has its item lost, and a
//     loan declared lost whose item has a replacement cost has a lost line;
//   - item-on-loan-without-loan: an item with the status on_loan has a current loan;
//   - item-several-current-loans: no item has more than one current loan;
//   - loan-without-item, loan-without-patron: every loan names an item that exists,
//     and a patron who exists unless it was anonymised;
//   - loan-anonymised-current: only a returned loan is anonymised (package privacy):
//     a current loan always names its patron, who owes its fines;
//   - loan-anonymised-without-category: an anonymised loan keeps the category of its
//     patron, so the statistics by patron category still count it;
//   - loan-dates: a loan falls due, and is returned, no earlier than it was issued.
func Check(tx *db.Tx) ([]stacks.Violation, error) {
	return db.Violations(tx, []db.Invariant{
		{Name: "loan-item-not-on-loan", Query: `SELECT printf('item %s (id %d) has the status %s, but loan %d to patron %s (id %d) issued %s is current',
				i.barcode, i.id, i.status, l.id, coalesce(p.card, '?'), l.patron_id, l.issued_at)
			FROM loans l JOIN items i ON i.id = l.item_id LEFT JOIN patrons p ON p.id = l.patron_id
			WHERE l.returned_at IS NULL AND i.status <> 'on_loan' AND NOT (i.status = 'lost' AND l.lost_at IS NOT NULL)
			ORDER BY i.id, l.id`},
		{Name: "lost-loan-not-billed", Query: `SELECT printf('loan %d of item %s (id %d) was declared lost %s, but %s',
				l.id, i.barcode, i.id, l.lost_at,
				CASE WHEN l.returned_at IS NULL AND i.status <> 'lost' THEN 'the item has the status ' || i.status
				     ELSE 'the patron was never billed its replacement cost' END)
			FROM loans l JOIN items i ON i.id = l.item_id JOIN item_types t ON t.id = i.item_type_id
			WHERE l.lost_at IS NOT NULL
			  AND ((l.returned_at IS NULL AND i.status <> 'lost')
			    OR ((i.price_cents > 0 OR t.default_price_cents > 0)
			        AND NOT EXISTS (SELECT 1 FROM ledger g WHERE g.loan_id = l.id AND g.kind = 'lost')))
			ORDER BY l.id`},
		{Name: "item-on-loan-without-loan", Query: `SELECT printf('item %s (id %d) has the status on_loan, but no current loan', i.barcode, i.id)
			FROM items i
			WHERE i.status = 'on_loan' AND NOT EXISTS (SELECT 1 FROM loans l WHERE l.item_id = i.id AND l.returned_at IS NULL)
			ORDER BY i.id`},
		{Name: "item-several-current-loans", Query: `SELECT printf('item %s (id %d) has %d current loans: %s',
				coalesce(i.barcode, '?'), l.item_id, count(*), group_concat(l.id, ', '))
			FROM loans l LEFT JOIN items i ON i.id = l.item_id
			WHERE l.returned_at IS NULL
			GROUP BY l.item_id HAVING count(*) > 1
			ORDER BY l.item_id`},
		{Name: "loan-without-item", Query: `SELECT printf('loan %d (patron id %d, issued %s) names item id %d, which does not exist',
				l.id, l.patron_id, l.issued_at, l.item_id)
			FROM loans l WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = l.item_id)
			ORDER BY l.id`},
		{Name: "loan-without-patron", Query: `SELECT printf('loan %d (item id %d, issued %s) names patron id %d, who does not exist',
				l.id, l.item_id, l.issued_at, l.patron_id)
			FROM loans l WHERE l.patron_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM patrons p WHERE p.id = l.patron_id)
			ORDER BY l.id`},
		{Name: "loan-anonymised-current", Query: `SELECT printf('loan %d (item id %d, issued %s) is current but names no patron: only returned loans are anonymised',
				l.id, l.item_id, l.issued_at)
			FROM loans l WHERE l.patron_id IS NULL AND l.returned_at IS NULL
			ORDER BY l.id`},
		{Name: "loan-anonymised-without-category", Query: `SELECT printf('loan %d (item id %d, issued %s) is anonymised but keeps no patron category, so statistics by category miss it',
				l.id, l.item_id, l.issued_at)
			FROM loans l WHERE l.patron_id IS NULL AND l.patron_category_id IS NULL
			ORDER BY l.id`},
		{Name: "loan-dates", Query: `SELECT printf('loan %d (item id %d) was issued %s but is due %s and returned %s',
				l.id, l.item_id, l.issued_at, l.due_at, coalesce(l.returned_at, '(not yet)'))
			FROM loans l WHERE l.due_at < l.issued_at OR l.returned_at < l.issued_at
			ORDER BY l.id`},
	})
}
