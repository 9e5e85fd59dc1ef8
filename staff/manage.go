package staff

import (
	"errors"
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
)

// list returns every staff account, active ones first, by username.
func list(tx *db.Tx) ([]User, error) {
	rows, err := tx.Query(`SELECT ` + userColumns + ` FROM staff_users u JOIN branches b ON b.id = u.branch_id
		ORDER BY u.active DESC, u.username`)
	if err != nil {
		return nil, fmt.Errorf("list staff: %w", err)
	}
	defer rows.Close()
	var users []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		users = append(users, *u)
	}
	return users, rows.Err()
}

// setActive deactivates or reactivates an account. A deactivated account cannot
// sign in, and its open sessions end at their next request. Nobody deactivates
// their own account, and the last active administrator stays active, so that
// someone can always administer the library.
func setActive(tx *db.Tx, actor stacks.Actor, id int64, active bool) error {
	u, err := FindByID(tx, id)
	if err != nil {
		return err
	}
	if !active {
		if id == actor.StaffID {
			return stacks.Errorf(stacks.EFORBIDDEN, "You cannot deactivate your own account; ask another administrator.")
		}
		if u.IsAdmin() && u.Active {
			var others int
			if err := tx.QueryRow(`SELECT count(*) FROM staff_users WHERE role = ? AND active = 1 AND id <> ?`, RoleAdmin, id).Scan(&others); err != nil {
				return fmt.Errorf("count administrators: %w", err)
			}
			if others == 0 {
				return stacks.Errorf(stacks.ECONFLICT, "%s is the last active administrator; make another account an administrator first.", u.Username)
			}
		}
	}
	if _, err := tx.Exec(`UPDATE staff_users SET active = ? WHERE id = ?`, active, id); err != nil {
		return fmt.Errorf("set staff account %d active: %w", id, err)
	}
	action := "staff.deactivate"
	if active {
		action = "staff.reactivate"
	}
	return tx.Audit(actor, action, "staff_user", id, u.Username)
}

// validateNewPassword checks a new password (4 to 72 bytes) without hashing it, so
// that a form can refuse a bad one before any bcrypt work.
func validateNewPassword(password string) error {
	if len(password) < 4 {
		return stacks.FieldErrorf("password", stacks.EINVALID, "Choose a password of at least 4 characters.")
	}
	if len(password) > 72 {
		return stacks.FieldErrorf("password", stacks.EINVALID, "Passwords can be at most 72 bytes long.")
	}
	return nil
}

// hashNewPassword checks a new password (validateNewPassword) and hashes it. It is
// slow on purpose: call it before the write transaction.
func hashNewPassword(password string) (string, error) {
	if err := validateNewPassword(password); err != nil {
		return "", err
	}
	return passwords.HashPassword(password)
}

// setPasswordHash replaces an account's password with one hashed by
// hashNewPassword. A lockout after failed sign-ins still runs its course.
func setPasswordHash(tx *db.Tx, actor stacks.Actor, id int64, hash string) error {
	u, err := FindByID(tx, id)
	if err != nil {
		return err
	}
	if hash == "" {
		return errors.New("staff: empty password hash")
	}
	if _, err := tx.Exec(`UPDATE staff_users SET password_hash = ? WHERE id = ?`, hash, id); err != nil {
		return fmt.Errorf("set the password of staff account %d: %w", id, err)
	}
	return tx.Audit(actor, "staff.password", "staff_user", id, u.Username)
}
