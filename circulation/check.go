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
		{Name: "loan-item-not-on-loan", Query: `SELECT 'item ' || i.barcode || ' (id ' || i.id || ') has the status ' || i.status || ', but loan ' || l.id
				|| ' to patron ' || coalesce(p.card, '?') || ' (id ' || coalesce(l.patron_id, 0) || ') issued ' || l.issued_at || ' is current'
			FROM loans l JOIN items i ON i.id = l.item_id LEFT JOIN patrons p ON p.id = l.patron_id
			WHERE l.returned_at IS NULL AND i.status <> 'on_loan' AND NOT (i.status = 'lost' AND l.lost_at IS NOT NULL)
			ORDER BY i.id, l.id`},
		{Name: "lost-loan-not-billed", Query: `SELECT 'loan ' || l.id || ' of item ' || i.barcode || ' (id ' || i.id || ') was declared lost ' || l.lost_at || ', but ' ||
				CASE WHEN l.returned_at IS NULL AND i.status <> 'lost' THEN 'the item has the status ' || i.status
				     ELSE 'the patron was never billed its replacement cost' END
			FROM loans l JOIN items i ON i.id = l.item_id JOIN item_types t ON t.id = i.item_type_id
			WHERE l.lost_at IS NOT NULL
			  AND ((l.returned_at IS NULL AND i.status <> 'lost')
			    OR ((i.price_cents > 0 OR t.default_price_cents > 0)
			        AND NOT EXISTS (SELECT 1 FROM ledger g WHERE g.loan_id = l.id AND g.kind = 'lost')))
			ORDER BY l.id`},
		{Name: "item-on-loan-without-loan", Query: `SELECT 'item ' || i.barcode || ' (id ' || i.id || ') has the status on_loan, but no current loan'
			FROM items i
			WHERE i.status = 'on_loan' AND NOT EXISTS (SELECT 1 FROM loans l WHERE l.item_id = i.id AND l.returned_at IS NULL)
			ORDER BY i.id`},
		{Name: "item-several-current-loans", Query: `SELECT 'item ' || coalesce(i.barcode, '?') || ' (id ' || l.item_id || ') has ' || count(*) || ' current loans: '
				|| string_agg(CAST(l.id AS TEXT), ', ' ORDER BY l.id)
			FROM loans l LEFT JOIN items i ON i.id = l.item_id
			WHERE l.returned_at IS NULL
			GROUP BY l.item_id, i.barcode HAVING count(*) > 1
			ORDER BY l.item_id`},
		{Name: "loan-without-item", Query: `SELECT 'loan ' || l.id || ' (patron id ' || coalesce(l.patron_id, 0) || ', issued ' || l.issued_at
				|| ') names item id ' || l.item_id || ', which does not exist'
			FROM loans l WHERE NOT EXISTS (SELECT 1 FROM items i WHERE i.id = l.item_id)
			ORDER BY l.id`},
		{Name: "loan-without-patron", Query: `SELECT 'loan ' || l.id || ' (item id ' || l.item_id || ', issued ' || l.issued_at
				|| ') names patron id ' || l.patron_id || ', who does not exist'
			FROM loans l WHERE l.patron_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM patrons p WHERE p.id = l.patron_id)
			ORDER BY l.id`},
		{Name: "loan-anonymised-current", Query: `SELECT 'loan ' || l.id || ' (item id ' || l.item_id || ', issued ' || l.issued_at
				|| ') is current but names no patron: only returned loans are anonymised'
			FROM loans l WHERE l.patron_id IS NULL AND l.returned_at IS NULL
			ORDER BY l.id`},
		{Name: "loan-anonymised-without-category", Query: `SELECT 'loan ' || l.id || ' (item id ' || l.item_id || ', issued ' || l.issued_at
				|| ') is anonymised but keeps no patron category, so statistics by category miss it'
			FROM loans l WHERE l.patron_id IS NULL AND l.patron_category_id IS NULL
			ORDER BY l.id`},
		{Name: "loan-dates", Query: `SELECT 'loan ' || l.id || ' (item id ' || l.item_id || ') was issued ' || l.issued_at
				|| ' but is due ' || l.due_at || ' and returned ' || coalesce(l.returned_at, '(not yet)')
			FROM loans l WHERE l.due_at < l.issued_at OR l.returned_at < l.issued_at
			ORDER BY l.id`},
	})
}
