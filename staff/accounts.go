package staff

import (
	"context"
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// SessionKey is the key under which the staff site's sessions keep the id of
// the account signed in: a changed password ends the sessions that hold it.
const SessionKey = "uid"

// Accounts is what the staff accounts page shows: every account, and the
// branches a new one may work at.
type Accounts struct {
	Users    []User
	Branches []library.Branch
}

// Accounts reads every account (list) and the branches, in one read
// transaction: two statements.
func (s *Service) Accounts(ctx context.Context) (Accounts, error) {
	var a Accounts
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if a.Users, err = list(tx); err != nil {
			return err
		}
		a.Branches, err = library.ListBranches(tx)
		return err
	})
	return a, err
}

// Branches lists the branches staff may work at, for the sign-in and Change
// branch forms.
func (s *Service) Branches(ctx context.Context) ([]library.Branch, error) {
	var bs []library.Branch
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		bs, err = library.ListBranches(tx)
		return err
	})
	return bs, err
}

// Add creates an account for the administrator actor, and audits it. The new
// account's fields are checked, and its password hashed, before the write
// transaction: bcrypt takes tens of milliseconds, which every desk's writes
// would wait for.
func (s *Service) Add(ctx context.Context, actor stacks.Actor, n NewUser) (*User, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if n.PasswordHash == "" {
		var err error
		if n.PasswordHash, err = hashNewPassword(n.Password); err != nil {
			return nil, err
		}
	}
	var u *User
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		if u, err = Create(tx, n); err != nil {
			return err
		}
		return tx.Audit(actor, "staff.create", "staff_user", u.ID, u.Username)
	})
	return u, err
}

// SetActive deactivates or reactivates an account (see setActive: never one's
// own, never the last active administrator).
func (s *Service) SetActive(ctx context.Context, actor stacks.Actor, id int64, active bool) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		return setActive(tx, actor, id, active)
	})
}

// SetCanWaive gives (can) or takes away the waive permission of an account,
// and returns the account as it is now.
func (s *Service) SetCanWaive(ctx context.Context, actor stacks.Actor, id int64, can bool) (*User, error) {
	var u *User
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		if err := setCanWaive(tx, actor, id, can); err != nil {
			return err
		}
		u, err = FindByID(tx, id)
		return err
	})
	return u, err
}

// ResetPassword gives the account id a new password, set by an administrator
// (actor), and ends the account's sessions everywhere: whoever signed in with
// the old password (the reason for a reset, often) is signed out. The password
// is checked (a field error on "password") and hashed before the write
// transaction.
func (s *Service) ResetPassword(ctx context.Context, actor stacks.Actor, id int64, password string) error {
	hash, err := hashNewPassword(password)
	if err != nil {
		return err
	}
	return s.setPassword(ctx, actor, id, hash)
}

// ChangePassword changes the signed-in user's own password. The current one is
// checked first, as at sign-in from addr and counting towards the same
// lockout, so that a session left open is not enough to take over the account,
// and the new one is hashed only for its owner: guessing here costs no more
// than guessing at the sign-in form. A new password that is not allowed is a
// field error on "password"; a current password that is not right, one on
// "current"; a lockout or a busy pool, ETOOMANY. The account's sessions end
// everywhere (the caller keeps its own under a new token).
func (s *Service) ChangePassword(ctx context.Context, u *User, current, password, addr string) error {
	if err := validateNewPassword(password); err != nil {
		return err
	}
	if _, err := s.Authenticate(ctx, u.Username, current, addr); err != nil {
		switch stacks.ErrorCode(err) {
		case stacks.EINTERNAL, stacks.ETOOMANY:
			return err
		}
		return stacks.FieldErrorf("current", stacks.EUNAUTHORIZED, "That is not your current password.")
	}
	hash, err := hashNewPassword(password)
	if err != nil {
		return err
	}
	return s.setPassword(ctx, u.Actor(), u.ID, hash)
}

// setPassword stores a new password's hash and ends the account's sessions,
// in one transaction.
func (s *Service) setPassword(ctx context.Context, actor stacks.Actor, id int64, hash string) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := setPasswordHash(tx, actor, id, hash); err != nil {
			return err
		}
		return endSessions(tx, id)
	})
}

// endSessions deletes every session of the staff site signed in as account
// id, in tx. It reads the id where the sessions' codec writes it (SessionKey);
// a session in the old gob encoding cannot be read this way, but none
// survived migration 0007.
func endSessions(tx *db.Tx, id int64) error {
	if _, err := tx.Exec(`DELETE FROM sessions WHERE `+db.SessionValue(tx, SessionKey)+` = ?`, id); err != nil {
		return fmt.Errorf("end the sessions of staff account %d: %w", id, err)
	}
	return nil
}
