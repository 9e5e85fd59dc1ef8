// Package staff owns the library's staff accounts: who may sign in, with which role,
// at which branch, and their sign-in (throttled by package passwords).
package staff

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/passwords"
)

// Roles. Circulation staff work the desk; administrators also edit rules, the
// calendar, preferences and accounts.
const (
	RoleCirculation = "circulation"
	RoleAdmin       = "admin"
)

// User is a staff account, as signed in at one branch.
type User struct {
	ID          int64
	Username    string
	DisplayName string
	Role        string
	// BranchID, BranchCode and BranchName are the branch the user works at: the
	// one chosen at sign-in or on the Change branch page (FindAt), else the
	// account's home branch. Every desk action happens there.
	BranchID   int64
	BranchCode string
	BranchName string
	// HomeBranchID, HomeBranchCode and HomeBranchName are the account's own
	// branch, where it works unless it chooses another.
	HomeBranchID   int64
	HomeBranchCode string
	HomeBranchName string
	Active         bool
	// CanWaive is the account's waive permission (set by an administrator); see
	// MayWaive.
	CanWaive bool
}

// AwayFromHome reports whether the user works at a branch other than the
// account's home branch.
func (u *User) AwayFromHome() bool { return u.BranchID != u.HomeBranchID }

// IsAdmin reports whether the user has the administrator role.
func (u *User) IsAdmin() bool { return u.Role == RoleAdmin }

// Actor returns the user as the actor of audited writes.
func (u *User) Actor() stacks.Actor {
	return stacks.Actor{StaffID: u.ID, Name: u.Username, BranchID: u.BranchID}
}

// NewUser is what Create needs.
type NewUser struct {
	Username    string
	DisplayName string
	Password    string
	Role        string
	BranchCode  string
	// PasswordHash, if set, is Password hashed beforehand (passwords.HashPassword), so that
	// a server does not hold the write connection for bcrypt; Create stores it
	// instead of hashing Password, which is still validated.
	PasswordHash string
}

// possibleUsername reports whether s can be a username: 1 to 64 bytes of text
// without spaces or control characters.
func possibleUsername(s string) bool {
	return s != "" && len(s) <= 64 && utf8.ValidString(s) &&
		!strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

// Validate checks a new account's fields.
func (n *NewUser) Validate() error {
	n.Username = strings.TrimSpace(n.Username)
	n.DisplayName = strings.TrimSpace(n.DisplayName)
	switch {
	case !possibleUsername(n.Username):
		return stacks.FieldErrorf("username", stacks.EINVALID, "Enter a username of 1 to 64 characters without spaces.")
	case n.DisplayName == "" || !utf8.ValidString(n.DisplayName) || len(n.DisplayName) > 200:
		return stacks.FieldErrorf("display_name", stacks.EINVALID, "Enter the name staff will see (up to 200 characters).")
	case len(n.Password) < 4:
		return stacks.FieldErrorf("password", stacks.EINVALID, "Choose a password of at least 4 characters.")
	case n.Role != RoleCirculation && n.Role != RoleAdmin:
		return stacks.FieldErrorf("role", stacks.EINVALID, "Role must be %q or %q.", RoleCirculation, RoleAdmin)
	}
	return nil
}

// Create adds a staff account inside tx.
func Create(tx *db.Tx, n NewUser) (*User, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	hash := n.PasswordHash
	if hash == "" {
		var err error
		if hash, err = passwords.HashPassword(n.Password); err != nil {
			return nil, err
		}
	}
	var branchID int64
	err := tx.QueryRow(`SELECT id FROM branches WHERE code = ?`, n.BranchCode).Scan(&branchID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, stacks.FieldErrorf("branch", stacks.EINVALID, "There is no branch with code %q.", n.BranchCode)
	} else if err != nil {
		return nil, fmt.Errorf("find branch: %w", err)
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO staff_users (username, display_name, password_hash, role, branch_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, n.Username, n.DisplayName, hash, n.Role, branchID, db.FormatTime(tx.Now())).Scan(&id)
	if db.IsUniqueViolation(err) {
		return nil, stacks.FieldErrorf("username", stacks.ECONFLICT, "The username %q is taken; choose another.", n.Username)
	} else if err != nil {
		return nil, fmt.Errorf("insert staff user: %w", err)
	}
	return FindByID(tx, id)
}

const userColumns = `u.id, u.username, u.display_name, u.role, u.branch_id, b.code, b.name, u.active, u.can_waive`

// scanUser scans userColumns, then into extra any columns selected after them.
// The user works at the home branch.
func scanUser(row interface{ Scan(...any) error }, extra ...any) (*User, error) {
	var u User
	err := row.Scan(append([]any{&u.ID, &u.Username, &u.DisplayName, &u.Role, &u.HomeBranchID, &u.HomeBranchCode, &u.HomeBranchName, &u.Active, &u.CanWaive}, extra...)...)
	if err != nil {
		return nil, err
	}
	u.BranchID, u.BranchCode, u.BranchName = u.HomeBranchID, u.HomeBranchCode, u.HomeBranchName
	return &u, nil
}

// FindByID returns the account with the given id.
func FindByID(tx *db.Tx, id int64) (*User, error) {
	u, err := scanUser(tx.QueryRow(`SELECT `+userColumns+` FROM staff_users u JOIN branches b ON b.id = u.branch_id WHERE u.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, stacks.Errorf(stacks.ENOTFOUND, "No staff account has id %d.", id)
	} else if err != nil {
		return nil, fmt.Errorf("find staff user %d: %w", id, err)
	}
	return u, nil
}

// FindAt returns the account with the given id working at the branch
// branchID: the branch a staff session chose. A branchID of 0, or of a branch
// that no longer exists, is the account's home branch. One statement.
func FindAt(tx *db.Tx, id, branchID int64) (*User, error) {
	var wID sql.NullInt64
	var wCode, wName sql.NullString
	u, err := scanUser(tx.QueryRow(`SELECT `+userColumns+`, w.id, w.code, w.name FROM staff_users u
		JOIN branches b ON b.id = u.branch_id
		LEFT JOIN branches w ON w.id = ?
		WHERE u.id = ?`, branchID, id), &wID, &wCode, &wName)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, stacks.Errorf(stacks.ENOTFOUND, "No staff account has id %d.", id)
	} else if err != nil {
		return nil, fmt.Errorf("find staff user %d: %w", id, err)
	}
	if wID.Valid {
		u.BranchID, u.BranchCode, u.BranchName = wID.Int64, wCode.String, wName.String
	}
	return u, nil
}

// findBranch returns the branch with the code (any case), or a field error on
// "branch" saying to choose one from the list.
func findBranch(tx *db.Tx, code string) (library.Branch, error) {
	b, err := library.FindBranchByCode(tx, code)
	if stacks.ErrorCode(err) == stacks.ENOTFOUND {
		return b, stacks.FieldErrorf("branch", stacks.EINVALID, "There is no branch with code %q. Choose the branch you work at from the list.", code)
	}
	return b, err
}

// ChangeBranch moves a signed-in user to the branch with the given code: the
// branch their desk works at from now on. The change is audited, naming both
// branches; the caller keeps the new branch in the session.
func (s *Service) ChangeBranch(ctx context.Context, u *User, code string) (library.Branch, error) {
	var b library.Branch
	err := s.DB.Write(ctx, func(tx *db.Tx) error {
		var err error
		if b, err = findBranch(tx, code); err != nil {
			return err
		}
		if b.ID == u.BranchID {
			return nil
		}
		return tx.Audit(u.Actor(), "staff.branch", "staff_user", u.ID,
			fmt.Sprintf("from %s (%s) to %s (%s)", u.BranchName, u.BranchCode, b.Name, b.Code))
	})
	return b, err
}

// KnownAccount is the name under which signin_addresses remembers the addresses
// a staff account signed in from (passwords.RememberAddress).
func KnownAccount(username string) string { return "staff:" + strings.ToLower(username) }

// Service signs staff in and keeps their accounts: each method opens its
// transaction and commits it.
type Service struct {
	DB *db.DB

	// signIns counts the attempts under passwords.DefaultThrottle.
	signIns *passwords.Limiter
}

// NewService returns a Service with the default throttle.
func NewService(d *db.DB) *Service {
	return &Service{DB: d, signIns: &passwords.Limiter{Throttle: passwords.DefaultThrottle, Words: signInWords}}
}

// signInWords are the refusals of staff sign-in's throttle: its addresses are
// counted under "addr:", apart from the patrons' site's.
var signInWords = passwords.Words{AddrPrefix: "addr:", Account: "this account", Failures: "failed sign-ins", Ask: "ask an administrator",
	Busy: stacks.Errorf(stacks.ETOOMANY, "A sign-in for this account is already being checked. Wait a moment and try again.")}

// errBadLogin is deliberately the same for an unknown user and a wrong password.
var errBadLogin = stacks.Errorf(stacks.EUNAUTHORIZED, "The username or password is not right. Check them and try again.")

// Authenticate checks a username and password from the address addr: SignIn at
// the account's home branch.
func (s *Service) Authenticate(ctx context.Context, username, password, addr string) (*User, error) {
	return s.SignIn(ctx, username, password, addr, "")
}

// SignIn checks a username and password from the address addr, for work at the
// branch with the code branchCode ("" for the account's home branch); the user
// returned works there, and the audited sign-in names it. An unknown branch is
// refused (a field error on "branch") before the password is counted or
// compared. The attempt is throttled (passwords.Throttle): counted per account
// and per address before the password is compared, refused while either is
// locked out or while another attempt for the account is in flight. A failed
// attempt runs the same statements whether the account exists or not.
func (s *Service) SignIn(ctx context.Context, username, password, addr, branchCode string) (*User, error) {
	username = strings.TrimSpace(username)
	if username == "" || password == "" {
		return nil, stacks.Errorf(stacks.EINVALID, "Enter your username and password.")
	}
	// The throttle keeps a row per name tried; a name no account can have (too long,
	// not text) shares one row, so that guesses cannot fill the table with junk.
	userKey, account := "user:"+strings.ToLower(username), KnownAccount(username)
	if !possibleUsername(username) {
		userKey, account = "user:(not a username)", ""
	}
	// A locked account is refused on a read connection, without the write lock
	// and before it waits for a turn, and so is a branch that does not exist.
	var (
		at      *library.Branch
		attempt *passwords.Attempt
	)
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		var err error
		if attempt, err = s.signIns.Begin(tx, userKey, account, addr); err != nil {
			return err
		}
		if strings.TrimSpace(branchCode) == "" {
			return nil
		}
		b, err := findBranch(tx, branchCode)
		at = &b
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := attempt.Wait(ctx); err != nil {
		return nil, err
	}
	defer attempt.Done()
	var (
		user   *User
		hash   string
		active bool
	)
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := attempt.Count(tx); err != nil {
			return err
		}
		var err error
		user, hash, active, err = findForLogin(tx, username)
		return err
	})
	if err != nil {
		return nil, err
	}
	match, err := passwords.Check(ctx, hash, password)
	if err != nil {
		return nil, err
	}
	if !match || user == nil || !active {
		return nil, errBadLogin
	}
	if at != nil {
		user.BranchID, user.BranchCode, user.BranchName = at.ID, at.Code, at.Name
	}
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := attempt.Succeeded(tx); err != nil {
			return err
		}
		return tx.Audit(user.Actor(), "staff.login", "staff_user", user.ID,
			fmt.Sprintf("from %s at %s (%s)", addr, user.BranchName, user.BranchCode))
	})
	if err != nil {
		return nil, fmt.Errorf("record sign-in: %w", err)
	}
	return user, nil
}

// findForLogin reads the account signing in and its password hash in one
// statement, so that a failed sign-in runs as many statements for an unknown
// name as for a real one (Server-Timing shows the count). No account: nil, "".
func findForLogin(tx *db.Tx, username string) (*User, string, bool, error) {
	var hash string
	u, err := scanUser(tx.QueryRow(`SELECT `+userColumns+`, u.password_hash FROM staff_users u
		JOIN branches b ON b.id = u.branch_id WHERE u.username = ?`, username), &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", false, nil
	} else if err != nil {
		return nil, "", false, fmt.Errorf("find staff user: %w", err)
	}
	return u, hash, u.Active, nil
}
