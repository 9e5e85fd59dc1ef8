package catalog

import (
	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// CreateRecordFromMARC adds rec as a new record, whatever records it matches
// (copy cataloguing's "add anyway"), and returns its id. It is written as the
// MARC editor writes a new record (createMARC): checked, its catalogue fields
// derived from it, its MARC kept as version 1; origin is named in the audit.
func CreateRecordFromMARC(tx *db.Tx, actor stacks.Actor, rec *marc.Record, origin string) (int64, error) {
	return createMARC(tx, actor, rec, origin)
}

// OverlayRecordFromMARC replaces record id's MARC, and the catalogue fields
// derived from it, by rec, as the MARC editor's save does (replaceMARC): the
// MARC it had is kept as a version when none holds it, then rec; its copies
// and holds stay. ENOTFOUND when there is no record id.
func OverlayRecordFromMARC(tx *db.Tx, actor stacks.Actor, id int64, rec *marc.Record, origin string) error {
	return replaceMARC(tx, actor, id, rec, "record.overlay", origin)
}
