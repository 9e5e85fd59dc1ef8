package catalog

import (
	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// CheckMaintenance verifies the invariants of withdrawals and merges in tx and returns every violation found. `stacks check` runs it.
//
// The invariants:
//   - item-withdrawal-status: an item has a withdrawal date exactly when it is
//     withdrawn, and a withdrawal reason only then;
//   - withdrawn-copy-unheld: no queued hold asks for a withdrawn copy (a
//     withdrawal cancels the copy's own holds);
//   - record-redirect-live: a merged record's link leads to a record in the
//     catalogue (record_redirects' foreign key), and the merged record is not
//     in the catalogue itself.
func CheckMaintenance(tx *db.Tx) ([]stacks.Violation, error) {
	return db.Violations(tx, []db.Invariant{
		{Name: "item-withdrawal-status", Query: `SELECT 'item ' || barcode || ' (id ' || id || ') is ' || status
				|| CASE WHEN status = 'withdrawn' THEN ' without the date of its withdrawal'
				ELSE ' but has a withdrawal (' || coalesce(withdrawn_at, 'no date') || ', reason "' || withdrawn_reason || '")' END
			FROM items
			WHERE (status = 'withdrawn' AND withdrawn_at IS NULL) OR (status <> 'withdrawn' AND (withdrawn_at IS NOT NULL OR withdrawn_reason <> ''))
			ORDER BY id`},
		{Name: "withdrawn-copy-unheld", Query: `SELECT 'hold ' || h.id || ' is queued for item ' || i.barcode || ' (id ' || i.id || '), which is withdrawn'
			FROM holds h JOIN items i ON i.id = h.item_id
			WHERE h.status = 'queued' AND i.status = 'withdrawn'
			ORDER BY h.id`},
		{Name: "record-redirect-live", Query: `SELECT 'record ' || d.from_id || ' was merged into record ' || d.to_id
				|| CASE WHEN r.id IS NULL THEN ', which is not in the catalogue' ELSE ', but is in the catalogue itself' END
			FROM record_redirects d LEFT JOIN records r ON r.id = d.to_id
			WHERE r.id IS NULL OR EXISTS (SELECT 1 FROM records f WHERE f.id = d.from_id)
			ORDER BY d.from_id`},
	})
}
