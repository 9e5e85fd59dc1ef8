package patrons

import (
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// CreateCategory adds a patron category (cards valid 12 months, 10 holds at
// most, the schema's defaults) and returns its id.
func CreateCategory(tx *db.Tx, actor stacks.Actor, code, name string) (int64, error) {
	code, err := stacks.NormalizeCode("category", code)
	if err != nil {
		return 0, err
	}
	if name, err = stacks.NormalizeName("category_name", name); err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO patron_categories (code, name) VALUES (?, ?) RETURNING id`, code, name).Scan(&id)
	if db.IsUniqueViolation(err) {
		return 0, stacks.FieldErrorf("category", stacks.ECONFLICT, "There is already a patron category with code %s.", code)
	} else if err != nil {
		return 0, fmt.Errorf("insert patron category: %w", err)
	}
	return id, tx.Audit(actor, "category.create", "patron_category", id, code)
}
