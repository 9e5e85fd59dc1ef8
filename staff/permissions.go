package staff

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// MayWaive reports whether the account may waive fines: administrators always,
// circulation staff when an administrator gave their account the waive
// permission.
func (u *User) MayWaive() bool { return u.IsAdmin() || u.CanWaive }

// ErrNoWaivePermission refuses a waiver by an account without the permission.
var ErrNoWaivePermission = stacks.Errorf(stacks.EFORBIDDEN,
	"Your account may not waive fines. Ask an administrator to waive them, or to give your account the waive permission (Administration, Staff).")

// CheckWaive refuses (ErrNoWaivePermission) unless the acting account may waive
// fines, read in tx so that a permission taken away a moment ago counts. An
// actor that is not a staff account (the system) may not waive.
func CheckWaive(tx *db.Tx, actor stacks.Actor) error {
	if actor.StaffID == 0 {
		return ErrNoWaivePermission
	}
	var role string
	var can, active bool
	err := tx.QueryRow(`SELECT role, can_waive, active FROM staff_users WHERE id = ?`, actor.StaffID).Scan(&role, &can, &active)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNoWaivePermission
	} else if err != nil {
		return fmt.Errorf("waive permission of staff account %d: %w", actor.StaffID, err)
	}
	u := User{Role: role, CanWaive: can}
	if !active || !u.MayWaive() {
		return ErrNoWaivePermission
	}
	return nil
}

// setCanWaive gives (can) or takes away the waive permission of an account, and
// audits the change. An administrator may always waive, so the flag only
// matters while the account is circulation staff.
func setCanWaive(tx *db.Tx, actor stacks.Actor, id int64, can bool) error {
	u, err := FindByID(tx, id)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE staff_users SET can_waive = ? WHERE id = ?`, can, id); err != nil {
		return fmt.Errorf("set the waive permission of staff account %d: %w", id, err)
	}
	action := "staff.waive_revoke"
	if can {
		action = "staff.waive_grant"
	}
	return tx.Audit(actor, action, "staff_user", id, u.Username)
}
