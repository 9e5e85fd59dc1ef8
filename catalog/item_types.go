package catalog

import (
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// CreateItemType adds an item type and returns its id. Items of a type not for
// loan (reference) are refused at the desk.
func CreateItemType(tx *db.Tx, actor stacks.Actor, code, name string, notForLoan bool) (int64, error) {
	code, err := stacks.NormalizeCode("item_type", code)
	if err != nil {
		return 0, err
	}
	if name, err = stacks.NormalizeName("item_type_name", name); err != nil {
		return 0, err
	}
	res, err := tx.Exec(`INSERT INTO item_types (code, name, not_for_loan) VALUES (?, ?, ?)`, code, name, notForLoan)
	if db.IsUniqueViolation(err) {
		return 0, stacks.FieldErrorf("item_type", stacks.ECONFLICT, "There is already an item type with code %s.", code)
	} else if err != nil {
		return 0, fmt.Errorf("insert item type: %w", err)
	}
	id, _ := res.LastInsertId()
	return id, tx.Audit(actor, "item_type.create", "item_type", id, code)
}
