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

// Throttle limits failed sign-ins: after MaxFailures failures within Window for one
// account, or MaxAddrFailures from one address, sign-ins for it are refused for
// Lockout. The address limit is higher: a branch's desks may share one address.
// An address is an IPv4 address or an IPv6 /64 (passwords.AddrKey).
//
// The account's count is shared by the addresses it has not signed in from
// within passwords.KnownFor: guesses rotated over many addresses meet one budget
// of MaxFailures a Window, and spending it locks only those addresses out. From
// an address the account signed in from before (a desk), failures count for
// that account and address alone, so that guesses from elsewhere never lock the
// desks out.
//
// Every attempt is counted before its password is compared, in the same write
// transaction that checks the lock (a success takes its count back), and at most
// MaxInFlight attempts per account and MaxAddrInFlight per address are checked at
// a time; more are refused at once. Guesses sent in parallel therefore cannot
// slip past the lock while the first ones are still being compared.
type Throttle struct {
	MaxFailures     int
	MaxAddrFailures int
	Window          time.Duration
	Lockout         time.Duration
	// MaxInFlight attempts per account and MaxAddrInFlight per address are checked
	// at a time; MaxWaiting more per account and per address may wait for their
	// turn, for at most InFlightWait; more are refused at once. Waiting is what
	// lets many desks sharing one account and one address (a branch behind NAT,
	// the load tool) sign in at once: each right password takes its count back
	// before the next is checked. A guess that waits is refused without a
	// comparison as soon as the account is locked, so waiting never adds
	// comparisons.
	MaxInFlight     int
	MaxAddrInFlight int
	MaxWaiting      int
	InFlightWait    time.Duration
}

// KnownAccount is the name under which signin_addresses remembers the addresses
// a staff account signed in from (passwords.IsKnown).
func KnownAccount(username string) string { return "staff:" + strings.ToLower(username) }

// DefaultThrottle is the throttle the server uses.
var DefaultThrottle = Throttle{MaxFailures: 5, MaxAddrFailures: 20, Window: 15 * time.Minute, Lockout: 15 * time.Minute,
	MaxInFlight: 1, MaxAddrInFlight: 4, MaxWaiting: 128, InFlightWait: 10 * time.Second}

// Service signs staff in.
type Service struct {
	DB       *db.DB
	Throttle Throttle

	// inFlight holds the attempts being checked, per account and per address.
	inFlight passwords.Gate
}

// NewService returns a Service with the default throttle.
func NewService(d *db.DB) *Service { return &Service{DB: d, Throttle: DefaultThrottle} }

// errBadLogin is deliberately the same for an unknown user and a wrong password.
var errBadLogin = stacks.Errorf(stacks.EUNAUTHORIZED, "The username or password is not right. Check them and try again.")

// errInFlight refuses an attempt while another for the same account (or too many
// from the same address) is being checked.
var errInFlight = stacks.Errorf(stacks.ETOOMANY, "A sign-in for this account is already being checked. Wait a moment and try again.")

// Authenticate checks a username and password from the address addr: SignIn at
// the account's home branch.
func (s *Service) Authenticate(ctx context.Context, username, password, addr string) (*User, error) {
	return s.SignIn(ctx, username, password, addr, "")
}

// SignIn checks a username and password from the address addr, for work at the
// branch with the code branchCode ("" for the account's home branch); the user
// returned works there, and the audited sign-in names it. An unknown branch is
// refused (a field error on "branch") before the password is counted or
// compared. It counts
// every attempt per account and per address before comparing the password, and
// refuses while either is locked out, or while another attempt for the account is
// in flight. A failed attempt runs the same statements whether the account exists
// or not.
func (s *Service) SignIn(ctx context.Context, username, password, addr, branchCode string) (*User, error) {
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
	// An address is an IPv4 address or an IPv6 /64. One attempt per account is
	// checked at a time, from whatever address (the gate's keys are the
	// account's and the address's), so that parallel attempts cannot pass the
	// lock before the first is counted.
	addrKey := passwords.AddrKey(addr)
	keys := []string{userKey, "addr:" + addrKey}

	// A locked account is refused on a read connection, without the write lock
	// and before it waits for a turn, and so is a branch that does not exist.
	// The same statement tells whether the account signed in from this address
	// before: then its failures count for this address alone (user:<name>
	// <address>), and its turn is taken under that key too, so that guesses
	// from elsewhere, which share the account's key, can neither lock this desk
	// out nor hold its turn.
	var at *library.Branch
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		account := ""
		if possibleUsername(username) {
			account = KnownAccount(username)
		}
		// A space, which no possible username has, parts name and address:
		// no name can make its key another account's key at an address.
		perAddr := userKey + " " + addrKey
		l, err := passwords.ReadLocks(tx, account, addrKey, userKey, perAddr, keys[1])
		if err != nil {
			return err
		}
		if l.Known {
			keys[0] = perAddr
		}
		if err := lockedError(tx.Now(), l.Until, keys); err != nil {
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
	t := s.Throttle
	leave, ok := s.inFlight.Enter(ctx, t.InFlightWait,
		passwords.Key{Name: keys[0], Max: t.MaxInFlight, MaxWaiting: t.MaxWaiting},
		passwords.Key{Name: keys[1], Max: t.MaxAddrInFlight, MaxWaiting: t.MaxWaiting})
	if !ok {
		return nil, errInFlight
	}
	defer leave()
	var (
		user   *User
		hash   string
		active bool
	)
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		// Checked again, and the attempt counted, in one transaction: no other
		// attempt can come between the check and the count.
		if err := s.checkLocked(tx, keys); err != nil {
			return err
		}
		if err := s.recordFailure(tx, keys); err != nil {
			return fmt.Errorf("count sign-in attempt: %w", err)
		}
		var err error
		user, hash, active, err = findForLogin(tx, username)
		return err
	})
	if err != nil {
		return nil, err
	}
	match, err := CheckPassword(ctx, hash, password)
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
		if err := s.clearAttempt(tx, keys, keys[0] != userKey); err != nil {
			return err
		}
		if err := passwords.RememberAddress(tx, KnownAccount(username), addrKey); err != nil {
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

// CheckPassword reports whether password matches hash, comparing on the bounded
// pool of package passwords (ErrBusy when it is full). For an account that does
// not exist (hash ""), it compares against a dummy hash all the same and reports
// false, so that the time taken does not tell which accounts exist. SIP2 logins
// use it too.
func CheckPassword(ctx context.Context, hash, password string) (bool, error) {
	if hash == "" {
		_, err := passwords.Compare(ctx, dummyHash(), password)
		return false, err
	}
	return passwords.Compare(ctx, hash, password)
}

// dummyHash is compared against when the user does not exist, made once at the
// current cost.
var dummyHash = sync.OnceValue(func() string {
	h, _ := bcrypt.GenerateFromPassword([]byte("not a real password"), BcryptCost)
	return string(h)
})

func (s *Service) checkLocked(tx *db.Tx, keys []string) error {
	l, err := passwords.ReadLocks(tx, "", "", keys...)
	if err != nil {
		return err
	}
	return lockedError(tx.Now(), l.Until, keys)
}

// lockedError refuses a sign-in while one of its keys is locked at now, saying
// which and for how long.
func lockedError(now time.Time, until map[string]time.Time, keys []string) error {
	for _, key := range keys {
		if wait := until[key].Sub(now); wait > 0 {
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
	return nil
}

// recordFailure counts an attempt under each key, before its password is
// compared, and locks a key that reaches its limit: the attempt that reaches it is
// still compared, the ones after it are refused. One statement: the count and
// the lock of both keys (a failure outside the window starts a new count).
func (s *Service) recordFailure(tx *db.Tx, keys []string) error {
	t := s.Throttle
	return passwords.CountFailure(tx, keys, t.Window, t.Lockout, t.MaxFailures, t.MaxAddrFailures)
}

// clearAttempt takes back the count of an attempt that succeeded. From a known
// address (known: keys[0] is the account's key at that address) the account's
// failures there are forgotten; from any other, keys[0] is the budget the
// account's unknown addresses share, and it loses only this attempt, so that a
// sign-in from a new address does not give guesses from elsewhere a fresh
// budget. The address's count loses the one this attempt added (with the lock
// that count may have set).
func (s *Service) clearAttempt(tx *db.Tx, keys []string, known bool) error {
	return passwords.GiveBack(tx, keys, known, s.Throttle.MaxFailures, s.Throttle.MaxAddrFailures)
}
