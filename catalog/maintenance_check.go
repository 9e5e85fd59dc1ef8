package catalog

import (
	"fmt"
	"slices"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
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
//     in the catalogue itself;
//   - record-system-numbers: once built, record_system_numbers holds each
//     record's 035 numbers as its MARC has them, and no others (the import
//     matcher reads them there instead of the MARC).
func CheckMaintenance(tx *db.Tx) ([]stacks.Violation, error) {
	vs, err := db.Violations(tx, []db.Invariant{
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
	if err != nil {
		return vs, err
	}
	more, err := checkSystemNumbers(tx)
	return append(vs, more...), err
}

// checkSystemNumbers compares record_system_numbers, once built, with the 035
// numbers of the records' MARC: those of every record whose MARC has an 035
// or that has rows.
func checkSystemNumbers(tx *db.Tx) ([]stacks.Violation, error) {
	if built, err := systemNumbersBuilt(tx); err != nil || !built {
		return nil, err
	}
	rows, err := tx.Query(`SELECT r.id, r.marc, coalesce(n.key, '') FROM records r LEFT JOIN record_system_numbers n ON n.record_id = r.id
		WHERE r.marc LIKE '%tag="035"%' OR n.record_id IS NOT NULL ORDER BY r.id`)
	if err != nil {
		return nil, fmt.Errorf("check the 035 numbers: %w", err)
	}
	defer rows.Close()
	var vs []stacks.Violation
	var id int64
	var source string
	var indexed []string
	flush := func() {
		if id == 0 {
			return
		}
		var want []string
		if rec, err := marc.FromXML(source); err == nil {
			want = uniqueKeys(rec)
		}
		slices.Sort(want)
		slices.Sort(indexed) // PostgreSQL's collation may order them otherwise
		if !slices.Equal(want, indexed) {
			vs = append(vs, stacks.Violation{Check: "record-system-numbers",
				Detail: fmt.Sprintf("record %d has the 035 numbers %q in its MARC but %q in record_system_numbers", id, want, indexed)})
		}
	}
	for rows.Next() {
		var rid int64
		var src, key string
		if err := rows.Scan(&rid, &src, &key); err != nil {
			return nil, err
		}
		if rid != id {
			flush()
			id, source, indexed = rid, src, nil
		}
		if key != "" {
			indexed = append(indexed, key)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	flush()
	return vs, nil
}
