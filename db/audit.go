package db

import (
	"database/sql"
	"fmt"

	"github.com/stacks-ils/stacks"
)

// Audit writes one entry to the audit log inside tx: who (the actor), did what
// (action, e.g. "checkout.override"), to what (objectType and objectID), and why.
func (tx *Tx) Audit(actor stacks.Actor, action, objectType string, objectID int64, detail string) error {
	var staff sql.NullInt64
	if actor.StaffID != 0 {
		staff = sql.NullInt64{Int64: actor.StaffID, Valid: true}
	}
	_, err := tx.Exec(`INSERT INTO audit_log (at, staff_id, actor, action, object_type, object_id, detail)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		FormatTime(tx.Now()), staff, actor.Name, action, objectType, objectID, detail)
	if err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}
