package sip

import (
	"context"
	"slices"
	"strconv"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// Accounts runs the administration of SIP accounts and lockouts in
// transactions of its own: each method opens one and commits it.
type Accounts struct {
	DB *db.DB
}

// NewAccounts returns the SIP accounts' administration on d.
func NewAccounts(d *db.DB) *Accounts { return &Accounts{DB: d} }

// ListedLockout is a lockout as staff see it listed.
type ListedLockout struct {
	Lockout
	// Who is the account's username for a login lockout, or the patron's card
	// and name for a PIN lockout.
	Who string
	// Locked is true while the lockout runs; false while failures are counted.
	Locked bool
}

// Overview is the SIP accounts page: every account, the branches a new one
// may work at, and the lockouts running.
type Overview struct {
	Accounts []Account
	Branches []library.Branch
	Lockouts []ListedLockout
}

// Overview reads the accounts page in one read transaction.
func (s *Accounts) Overview(ctx context.Context) (Overview, error) {
	var o Overview
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if o.Accounts, err = ListAccounts(tx); err != nil {
			return err
		}
		if o.Branches, err = library.ListBranches(tx); err != nil {
			return err
		}
		o.Lockouts, err = listNamedLockouts(tx)
		return err
	})
	return o, err
}

// listNamedLockouts reads the lockouts and names who each is about: the
// patrons of PIN lockouts are read in one statement.
func listNamedLockouts(tx *db.Tx) ([]ListedLockout, error) {
	list, err := ListLockouts(tx)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, l := range list {
		if id, err := strconv.ParseInt(l.Subject, 10, 64); l.Kind == "pin" && err == nil && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	found, err := patrons.FindByIDs(tx, ids)
	if err != nil {
		return nil, err
	}
	now := tx.Now()
	out := make([]ListedLockout, len(list))
	for i, l := range list {
		out[i] = ListedLockout{Lockout: l, Who: l.Subject, Locked: l.Locked(now)}
		if l.Kind != "pin" {
			continue
		}
		id, _ := strconv.ParseInt(l.Subject, 10, 64)
		if p, ok := found[id]; ok {
			out[i].Who = p.Card + " " + p.FirstName + " " + p.Surname
		} else {
			out[i].Who = "a patron since deleted (id " + l.Subject + ")"
		}
	}
	return out, nil
}

// Create adds an account. The password is hashed before the write
// transaction: bcrypt takes tens of milliseconds, which every desk's and
// terminal's writes would wait for.
func (s *Accounts) Create(ctx context.Context, actor stacks.Actor, n NewAccount) (*Account, error) {
	hash, err := HashAccountPassword(n.Password)
	if err != nil {
		return nil, err
	}
	n.PasswordHash = hash
	var a *Account
	err = s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		a, err = CreateAccount(tx, actor, n)
		return err
	})
	return a, err
}

// Account reads an account, with the branches it may be moved to, in one read
// transaction.
func (s *Accounts) Account(ctx context.Context, id int64) (*Account, []library.Branch, error) {
	var (
		a  *Account
		bs []library.Branch
	)
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if a, err = FindAccount(tx, id); err != nil {
			return err
		}
		bs, err = library.ListBranches(tx)
		return err
	})
	return a, bs, err
}

// Update saves an account's institution, branch and settings and returns the
// account as it was (its username names it to staff).
func (s *Accounts) Update(ctx context.Context, actor stacks.Actor, id int64, u AccountUpdate) (*Account, error) {
	var old *Account
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		old, err = updateAccount(tx, actor, id, u)
		return err
	})
	return old, err
}

// SetActive deactivates or reactivates an account.
func (s *Accounts) SetActive(ctx context.Context, actor stacks.Actor, id int64, active bool) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return SetAccountActive(tx, actor, id, active) })
}

// SetPassword checks and hashes an account's new password, then stores it:
// the hash is made before the write transaction.
func (s *Accounts) SetPassword(ctx context.Context, actor stacks.Actor, id int64, password string) error {
	hash, err := HashAccountPassword(password)
	if err != nil {
		return err
	}
	return s.DB.Write(ctx, func(tx *db.Tx) error { return SetAccountPassword(tx, actor, id, hash) })
}

// ClearLockout lifts a lockout; ENOTFOUND when it has ended already.
func (s *Accounts) ClearLockout(ctx context.Context, actor stacks.Actor, key string) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return ClearLockout(tx, actor, key) })
}
