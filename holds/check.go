package holds

import (
	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Check verifies the invariants of the hold queues and the hold shelf in tx, and
// returns every violation found (none is nil). `stacks check` runs it.
//
// The invariants:
//   - hold-queue-numbering: a record's queued holds are numbered 1 to n, each number
//     once (Koha's convention, which Move, Fill, Close and trapping keep);
//   - hold-trapped-priority: a trapped hold (waiting or in transit) has priority 0;
//   - hold-trapped-item: a trapped hold names a copy that exists, of the hold's
//     record, and the very copy asked for by an item-level hold;
//   - hold-waiting-item: the copy of a waiting hold is on the hold shelf at the
//     pickup branch;
//   - hold-in-transit-item: the copy of a hold in transit is in transit to the
//     pickup branch;
//   - item-on-hold-shelf-without-hold: a copy on the hold shelf is there for a
//     waiting hold.
func Check(tx *db.Tx) ([]stacks.Violation, error) {
	return db.Violations(tx, []db.Invariant{
		{Name: "hold-queue-numbering", Query: `SELECT printf('record %d has %d queued holds with the positions %s (holds %s); they must be numbered 1 to %d',
				record_id, count(*), group_concat(priority, ', ' ORDER BY priority, id), group_concat(id, ', ' ORDER BY priority, id), count(*))
			FROM holds WHERE status = 'queued'
			GROUP BY record_id
			HAVING min(priority) <> 1 OR max(priority) <> count(*) OR count(DISTINCT priority) <> count(*)
			ORDER BY record_id`},
		{Name: "hold-trapped-priority", Query: `SELECT printf('hold %d (record %d) is %s but has priority %d; a trapped hold has priority 0',
				id, record_id, status, priority)
			FROM holds WHERE status IN ('waiting', 'in_transit') AND priority <> 0
			ORDER BY id`},
		{Name: "hold-trapped-item", Query: `SELECT CASE
				WHEN h.trapped_item_id IS NULL THEN printf('hold %d (record %d) is %s but names no trapped copy', h.id, h.record_id, h.status)
				WHEN i.id IS NULL THEN printf('hold %d (record %d) is %s for item id %d, which does not exist', h.id, h.record_id, h.status, h.trapped_item_id)
				WHEN i.record_id <> h.record_id THEN printf('hold %d is on record %d but is %s with item %s (id %d) of record %d',
					h.id, h.record_id, h.status, i.barcode, i.id, i.record_id)
				ELSE printf('hold %d asks for item id %d but is %s with item %s (id %d)', h.id, h.item_id, h.status, i.barcode, i.id)
				END
			FROM holds h LEFT JOIN items i ON i.id = h.trapped_item_id
			WHERE h.status IN ('waiting', 'in_transit')
			  AND (i.id IS NULL OR i.record_id <> h.record_id OR (h.item_id IS NOT NULL AND h.item_id <> i.id))
			ORDER BY h.id`},
		{Name: "hold-waiting-item", Query: `SELECT printf('hold %d is waiting at %s with item %s (id %d), but the item is %s at %s',
				h.id, pb.code, i.barcode, i.id, i.status, coalesce(cb.code, '?'))
			FROM holds h JOIN items i ON i.id = h.trapped_item_id
			JOIN branches pb ON pb.id = h.pickup_branch_id LEFT JOIN branches cb ON cb.id = i.current_branch_id
			WHERE h.status = 'waiting' AND (i.status <> 'on_hold_shelf' OR i.current_branch_id <> h.pickup_branch_id)
			ORDER BY h.id`},
		{Name: "hold-in-transit-item", Query: `SELECT printf('hold %d is in transit to %s with item %s (id %d), but the item is %s%s',
				h.id, pb.code, i.barcode, i.id, i.status, CASE WHEN i.transit_to_id IS NULL THEN '' ELSE ' to ' || coalesce(tb.code, '?') END)
			FROM holds h JOIN items i ON i.id = h.trapped_item_id
			JOIN branches pb ON pb.id = h.pickup_branch_id LEFT JOIN branches tb ON tb.id = i.transit_to_id
			WHERE h.status = 'in_transit' AND (i.status <> 'in_transit' OR i.transit_to_id IS NOT h.pickup_branch_id)
			ORDER BY h.id`},
		{Name: "item-on-hold-shelf-without-hold", Query: `SELECT printf('item %s (id %d) is on the hold shelf, but no waiting hold is for it', i.barcode, i.id)
			FROM items i
			WHERE i.status = 'on_hold_shelf'
			  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.trapped_item_id = i.id AND h.status = 'waiting')
			ORDER BY i.id`},
	})
}
