// Package staff owns the library's staff accounts: who may sign in, with which role,
// at which branch, and the throttling of failed sign-ins.
package staff

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Roles. Circulation staff work the desk; administrators also edit rules, the
// calendar, preferences and accounts.
const (
	RoleCirculation = "circulation"
	RoleAdmin       = "admin"
)

// User is a staff account.
type User struct {
	ID          int64
	Username    string
	DisplayName string
	Role        string
	BranchID    int64
	BranchCode  string
	BranchName  string
	Active      bool
}

// IsAdmin reports whether the user has the administrator role.
func (u *User) IsAdmin() bool { return u.Role == RoleAdmin }

// Actor returns the user as the actor of audited writes.
func (u *User) Actor() stacks.Actor {
	return stacks.Actor{StaffID: u.ID, Name: u.Username, BranchID: u.BranchID}
}

// BcryptCost is the cost of new password hashes: bcrypt's default, about 50-100 ms a
// hash here, paid only at sign-in. Tests lower it (the race detector makes bcrypt
// many times slower); existing hashes keep the cost they were made with.
var BcryptCost = bcrypt.DefaultCost

// HashPassword hashes a password for storage.
func HashPassword(password string) (string, error) {
	if len(password) > 72 {
		return "", stacks.FieldErrorf("password", stacks.EINVALID, "Passwords can be at most 72 bytes long.")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), BcryptCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// NewUser is what Create needs.
type NewUser struct {
	Username    string
	DisplayName string
	Password    string
	Role        string
	BranchCode  string
	// PasswordHash, if set, is Password hashed beforehand (HashPassword), so that
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
		if hash, err = HashPassword(n.Password); err != nil {
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
	res, err := tx.Exec(`INSERT INTO staff_users (username, display_name, password_hash, role, branch_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, n.Username, n.DisplayName, hash, n.Role, branchID, db.FormatTime(tx.Now()))
	if db.IsUniqueViolation(err) {
		return nil, stacks.FieldErrorf("username", stacks.ECONFLICT, "The username %q is taken; choose another.", n.Username)
	} else if err != nil {
		return nil, fmt.Errorf("insert staff user: %w", err)
	}
	id, _ := res.LastInsertId()
	return FindByID(tx, id)
}

const userColumns = `u.id, u.username, u.display_name, u.role, u.branch_id, b.code, b.name, u.active`

func scanUser(row interface{ Scan(...any) error }) (*User, error) {
	var u User
	err := row.Scan(&u.ID, &u.Username, &u.DisplayName, &u.Role, &u.BranchID, &u.BranchCode, &u.BranchName, &u.Active)
	if err != nil {
		return nil, err
	}
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

// Throttle limits failed sign-ins: after MaxFailures failures within Window for one
// account, or MaxAddrFailures from one address, sign-ins for it are refused for
// Lockout. The address limit is higher: a branch's desks may share one address.
type Throttle struct {
	MaxFailures     int
	MaxAddrFailures int
	Window          time.Duration
	Lockout         time.Duration
}

// DefaultThrottle is the throttle the server uses.
var DefaultThrottle = Throttle{MaxFailures: 5, MaxAddrFailures: 20, Window: 15 * time.Minute, Lockout: 15 * time.Minute}

// Service signs staff in.
type Service struct {
	DB       *db.DB
	Throttle Throttle
}

// NewService returns a Service with the default throttle.
func NewService(d *db.DB) *Service { return &Service{DB: d, Throttle: DefaultThrottle} }

// errBadLogin is deliberately the same for an unknown user and a wrong password.
var errBadLogin = stacks.Errorf(stacks.EUNAUTHORIZED, "The username or password is not right. Check them and try again.")

// Authenticate checks a username and password from the address addr. It counts
// failures per account and per address and refuses while either is locked out.
func (s *Service) Authenticate(ctx context.Context, username, password, addr string) (*User, error) {
	username = strings.TrimSpace(username)
	if username == "" || password == "" {
		return nil, stacks.Errorf(stacks.EINVALID, "Enter your username and password.")
	}
	// The throttle keeps a row per name tried; a name no account can have (too long,
	// not text) shares one row, so that guesses cannot fill the table with junk.
	userKey := "user:" + strings.ToLower(username)
	if !possibleUsername(username) {
		userKey = "user:(not a username)"
	}
	keys := []string{userKey, "addr:" + addr}

	var (
		user   *User
		hash   string
		active bool
	)
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		if err := s.checkLocked(tx, keys); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRow(`SELECT id, password_hash, active FROM staff_users WHERE username = ?`, username).Scan(&id, &hash, &active)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return fmt.Errorf("find staff user: %w", err)
		}
		user, err = FindByID(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	ok := CheckPassword(hash, password) && user != nil && active

	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if ok {
			_, err := tx.Exec(`DELETE FROM login_throttle WHERE key = ?`, keys[0])
			if err != nil {
				return err
			}
			return tx.Audit(user.Actor(), "staff.login", "staff_user", user.ID, "from "+addr)
		}
		return s.recordFailure(tx, keys)
	})
	if err != nil {
		return nil, fmt.Errorf("record sign-in: %w", err)
	}
	if !ok {
		return nil, errBadLogin
	}
	return user, nil
}

// CheckPassword reports whether password matches hash. For an account that does
// not exist (hash ""), it compares against a dummy hash all the same and reports
// false, so that the time taken does not tell which accounts exist. SIP2 logins
// use it too.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		bcrypt.CompareHashAndPassword([]byte(dummyHash()), []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// dummyHash is compared against when the user does not exist, made once at the
// current cost.
var dummyHash = sync.OnceValue(func() string {
	h, _ := bcrypt.GenerateFromPassword([]byte("not a real password"), BcryptCost)
	return string(h)
})

func (s *Service) checkLocked(tx *db.Tx, keys []string) error {
	rows, err := tx.Query(`SELECT key, locked_until FROM login_throttle WHERE key IN (?, ?) AND locked_until IS NOT NULL`, keys[0], keys[1])
	if err != nil {
		return fmt.Errorf("read login throttle: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var until db.Time
		if err := rows.Scan(&key, &until); err != nil {
			return err
		}
		if wait := until.Sub(tx.Now()); wait > 0 {
			mins := int(wait.Round(time.Minute) / time.Minute)
			if mins < 1 {
				mins = 1
			}
			what := "this account"
			if strings.HasPrefix(key, "addr:") {
				what = "this computer"
			}
			return stacks.Errorf(stacks.ETOOMANY, "Too many failed sign-ins for %s. Wait %d minute(s) and try again, or ask an administrator.", what, mins)
		}
	}
	return rows.Err()
}

func (s *Service) recordFailure(tx *db.Tx, keys []string) error {
	now := tx.Now()
	windowStart := db.FormatTime(now.Add(-s.Throttle.Window))
	lockUntil := db.FormatTime(now.Add(s.Throttle.Lockout))
	for i, key := range keys {
		limit := s.Throttle.MaxFailures
		if i == 1 {
			limit = s.Throttle.MaxAddrFailures
		}
		// A failure outside the window starts a new count.
		_, err := tx.Exec(`INSERT INTO login_throttle (key, failures, first_at) VALUES (?, 1, ?)
			ON CONFLICT (key) DO UPDATE SET
				failures = CASE WHEN login_throttle.first_at < ? THEN 1 ELSE login_throttle.failures + 1 END,
				first_at = CASE WHEN login_throttle.first_at < ? THEN excluded.first_at ELSE login_throttle.first_at END,
				locked_until = NULL`,
			key, db.FormatTime(now), windowStart, windowStart)
		if err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE login_throttle SET locked_until = ? WHERE key = ? AND failures >= ?`,
			lockUntil, key, limit)
		if err != nil {
			return err
		}
	}
	return nil
}
