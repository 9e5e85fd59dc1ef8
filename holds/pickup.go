package holds

import (
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// ChangePickup moves a queued hold's pickup to the branch with code. A hold
// already trapped (in transit to its pickup branch, or waiting there) keeps its
// branch: its copy is already on the way or on that shelf.
func ChangePickup(tx *db.Tx, actor stacks.Actor, holdID int64, branchCode string) error {
	b, err := library.FindBranchByCode(tx, branchCode)
	if err != nil {
		return stacks.FieldErrorf("pickup", stacks.EINVALID, "Choose a pickup branch from the list.")
	}
	if _, _, err := openQueued(tx, holdID); err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE holds SET pickup_branch_id = ? WHERE id = ?`, b.ID, holdID); err != nil {
		return fmt.Errorf("change pickup of hold %d: %w", holdID, err)
	}
	return tx.Audit(actor, "hold.pickup", "hold", holdID, "pickup "+b.Code)
}

// QueueLength returns how many holds are open on a record (queued, in transit
// or waiting), without reading who placed them: what a patron may know.
func QueueLength(tx *db.Tx, recordID int64) (int, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM holds WHERE record_id = ? AND status IN ('queued', 'in_transit', 'waiting')`, recordID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("hold queue length: %w", err)
	}
	return n, nil
}
