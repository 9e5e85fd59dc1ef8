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
		{Name: "hold-queue-numbering", Query: `SELECT 'record ' || record_id || ' has ' || count(*) || ' queued holds with the positions '
				|| string_agg(CAST(priority AS TEXT), ', ' ORDER BY priority, id) || ' (holds ' || string_agg(CAST(id AS TEXT), ', ' ORDER BY priority, id)
				|| '); they must be numbered 1 to ' || count(*)
			FROM holds WHERE status = 'queued'
			GROUP BY record_id
			HAVING min(priority) <> 1 OR max(priority) <> count(*) OR count(DISTINCT priority) <> count(*)
			ORDER BY record_id`},
		{Name: "hold-trapped-priority", Query: `SELECT 'hold ' || id || ' (record ' || record_id || ') is ' || status || ' but has priority ' || priority
				|| '; a trapped hold has priority 0'
			FROM holds WHERE status IN ('waiting', 'in_transit') AND priority <> 0
			ORDER BY id`},
		{Name: "hold-trapped-item", Query: `SELECT CASE
				WHEN h.trapped_item_id IS NULL THEN 'hold ' || h.id || ' (record ' || h.record_id || ') is ' || h.status || ' but names no trapped copy'
				WHEN i.id IS NULL THEN 'hold ' || h.id || ' (record ' || h.record_id || ') is ' || h.status || ' for item id ' || h.trapped_item_id
					|| ', which does not exist'
				WHEN i.record_id <> h.record_id THEN 'hold ' || h.id || ' is on record ' || h.record_id || ' but is ' || h.status
					|| ' with item ' || i.barcode || ' (id ' || i.id || ') of record ' || i.record_id
				ELSE 'hold ' || h.id || ' asks for item id ' || coalesce(h.item_id, 0) || ' but is ' || h.status
					|| ' with item ' || i.barcode || ' (id ' || i.id || ')'
				END
			FROM holds h LEFT JOIN items i ON i.id = h.trapped_item_id
			WHERE h.status IN ('waiting', 'in_transit')
			  AND (i.id IS NULL OR i.record_id <> h.record_id OR (h.item_id IS NOT NULL AND h.item_id <> i.id))
			ORDER BY h.id`},
		{Name: "hold-waiting-item", Query: `SELECT 'hold ' || h.id || ' is waiting at ' || pb.code || ' with item ' || i.barcode || ' (id ' || i.id
				|| '), but the item is ' || i.status || ' at ' || coalesce(cb.code, '?')
			FROM holds h JOIN items i ON i.id = h.trapped_item_id
			JOIN branches pb ON pb.id = h.pickup_branch_id LEFT JOIN branches cb ON cb.id = i.current_branch_id
			WHERE h.status = 'waiting' AND (i.status <> 'on_hold_shelf' OR i.current_branch_id <> h.pickup_branch_id)
			ORDER BY h.id`},
		{Name: "hold-in-transit-item", Query: `SELECT 'hold ' || h.id || ' is in transit to ' || pb.code || ' with item ' || i.barcode || ' (id ' || i.id
				|| '), but the item is ' || i.status || CASE WHEN i.transit_to_id IS NULL THEN '' ELSE ' to ' || coalesce(tb.code, '?') END
			FROM holds h JOIN items i ON i.id = h.trapped_item_id
			JOIN branches pb ON pb.id = h.pickup_branch_id LEFT JOIN branches tb ON tb.id = i.transit_to_id
			WHERE h.status = 'in_transit' AND (i.status <> 'in_transit' OR i.transit_to_id IS DISTINCT FROM h.pickup_branch_id)
			ORDER BY h.id`},
		{Name: "item-on-hold-shelf-without-hold", Query: `SELECT 'item ' || i.barcode || ' (id ' || i.id || ') is on the hold shelf, but no waiting hold is for it'
			FROM items i
			WHERE i.status = 'on_hold_shelf'
			  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.trapped_item_id = i.id AND h.status = 'waiting')
			ORDER BY i.id`},
	})
}
