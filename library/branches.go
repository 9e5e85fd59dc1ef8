package library

import (
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// CreateBranch adds a branch, closed on Sundays and closing at 20:00 until an
// administrator sets its hours (Administration, Calendar).
func CreateBranch(tx *db.Tx, actor stacks.Actor, code, name string) (Branch, error) {
	code, err := stacks.NormalizeCode("branch", code)
	if err != nil {
		return Branch{}, err
	}
	if name, err = stacks.NormalizeName("branch_name", name); err != nil {
		return Branch{}, err
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO branches (code, name) VALUES (?, ?) RETURNING id`, code, name).Scan(&id)
	if db.IsUniqueViolation(err) {
		return Branch{}, stacks.FieldErrorf("branch", stacks.ECONFLICT, "There is already a branch with code %s.", code)
	} else if err != nil {
		return Branch{}, fmt.Errorf("insert branch: %w", err)
	}
	if err := tx.Audit(actor, "branch.create", "branch", id, code); err != nil {
		return Branch{}, err
	}
	return FindBranchByCode(tx, code)
}
