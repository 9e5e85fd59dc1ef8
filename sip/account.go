package sip

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
)

// Account is the account a self-check machine or sorter logs in with (message 93).
// It answers for one institution and works at one branch: its checkouts and checkins
// happen there, as a staff account's do.
type Account struct {
	ID          int64
	Username    string
	Institution string
	BranchID    int64
	BranchCode  string
	BranchName  string
	Active      bool
	Settings    Settings
	CreatedAt   time.Time
	// LastSeenAt is when a terminal last used the account (zero: never), from
	// LastSeenAddr; written at login and at most once a minute a connection.
	LastSeenAt   time.Time
	LastSeenAddr string
}

// Actor returns the account as the actor of the writes it makes: "sip:kiosk" in the
// audit log and the checkins list.
func (a *Account) Actor() stacks.Actor {
	return stacks.Actor{Name: "sip:" + a.Username, BranchID: a.BranchID}
}

// NewAccount is what CreateAccount needs.
type NewAccount struct {
	Username    string
	Password    string
	Institution string
	BranchCode  string
	// PasswordHash, if set, is a bcrypt hash of Password, stored as it is instead of
	// hashing Password (which is then only checked for length): for the demo's fixed
	// account, so that creating the demo costs no hash. It is not compared with
	// Password, since that would cost as much as hashing.
	PasswordHash string
}

// validText reports whether s can travel in a SIP field: 1 to max bytes of UTF-8
// without control characters or the "|" that ends a field.
func validText(s string, max int) bool {
	return s != "" && len(s) <= max && utf8.ValidString(s) &&
		!strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '|' })
}

// CreateAccount adds a SIP account inside tx. The password is stored as a bcrypt
// hash, like a staff password.
func CreateAccount(tx *db.Tx, actor stacks.Actor, n NewAccount) (*Account, error) {
	n.Username, n.Institution = strings.TrimSpace(n.Username), strings.TrimSpace(n.Institution)
	switch {
	case !validText(n.Username, 64) || strings.Contains(n.Username, " "):
		return nil, stacks.FieldErrorf("username", stacks.EINVALID, "Enter a username of 1 to 64 characters without spaces or \"|\".")
	case len(n.Password) < 4 || !validText(n.Password, 72):
		return nil, stacks.FieldErrorf("password", stacks.EINVALID, "Choose a password of 4 to 72 characters without \"|\".")
	case !validText(n.Institution, 64):
		return nil, stacks.FieldErrorf("institution", stacks.EINVALID, "Enter the institution ID the machines send (the AO field), up to 64 characters.")
	}
	hash := n.PasswordHash
	if hash == "" {
		var err error
		if hash, err = passwords.HashPassword(n.Password); err != nil {
			return nil, err
		}
	} else if _, err := bcrypt.Cost([]byte(hash)); err != nil {
		return nil, stacks.FieldErrorf("password", stacks.EINVALID, "The password hash given is not a bcrypt hash.")
	}
	branchID, err := branchByCode(tx, n.BranchCode)
	if err != nil {
		return nil, err
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO sip_accounts (username, password_hash, institution, branch_id, created_at)
		VALUES (?, ?, ?, ?, ?) RETURNING id`, n.Username, hash, n.Institution, branchID, db.FormatTime(tx.Now())).Scan(&id)
	if db.IsUniqueViolation(err) {
		return nil, stacks.FieldErrorf("username", stacks.ECONFLICT, "The SIP username %q is taken; choose another.", n.Username)
	} else if err != nil {
		return nil, fmt.Errorf("insert SIP account: %w", err)
	}
	if err := tx.Audit(actor, "sip.account.create", "sip_account", id, n.Username+" for "+n.Institution+" at "+n.BranchCode); err != nil {
		return nil, err
	}
	return findAccount(tx, n.Username)
}

// findAccount reads an account by username, with its branch.
func findAccount(tx *db.Tx, username string) (*Account, error) {
	a, err := scanAccount(tx.QueryRow(`SELECT `+accountColumns+`
		FROM sip_accounts a JOIN branches b ON b.id = a.branch_id WHERE a.username = ?`, username))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, stacks.Errorf(stacks.ENOTFOUND, "There is no SIP account %q.", username)
	} else if err != nil {
		return nil, fmt.Errorf("find SIP account %q: %w", username, err)
	}
	return a, nil
}

// errBadLogin is the same for an unknown account, a wrong password and an inactive
// account.
var errBadLogin = stacks.Errorf(stacks.EUNAUTHORIZED, "The SIP username or password is not right.")

// authenticate checks a SIP login and returns the account with the hash the
// password matched. The password comparison (bcrypt, slow on purpose) runs
// outside the read transaction, on the bounded pool of package passwords
// (passwords.ErrBusy when it is full), and also for an unknown account, so that
// timing does not tell which accounts exist. The caller throttles attempts.
func authenticate(ctx context.Context, d *db.DB, username, password string) (*Account, string, error) {
	var (
		acct *Account
		hash string
	)
	err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		acct, hash, err = accountWithHash(tx, username)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	ok, err := passwords.Check(ctx, hash, password)
	if err != nil {
		return nil, "", err
	}
	if !ok || acct == nil || !acct.Active {
		return nil, "", errBadLogin
	}
	return acct, hash, nil
}

// accountWithHash reads an account by username with its password hash; nil and
// "" when there is none.
func accountWithHash(tx *db.Tx, username string) (*Account, string, error) {
	var hash string
	err := tx.QueryRow(`SELECT password_hash FROM sip_accounts WHERE username = ?`, username).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", nil
	} else if err != nil {
		return nil, "", fmt.Errorf("find SIP account: %w", err)
	}
	acct, err := findAccount(tx, username)
	if err != nil {
		return nil, "", err
	}
	return acct, hash, nil
}
