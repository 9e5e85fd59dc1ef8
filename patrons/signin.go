package patrons

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/staff"
)

// SignIn lets patrons sign in to the patrons' catalogue with their card number
// and PIN, throttled as staff sign-in is (staff.Service.Authenticate, the lessons
// of issue 13): every attempt is counted, per card and per address, before its
// PIN is compared, in the same write transaction that checks the lock; one
// attempt per card and a few per address are compared at a time; the
// comparisons run on the bounded pool of package passwords. A four-digit PIN
// is quickly guessed otherwise.
//
// The counts live in login_throttle, under keys of their own ("card:" and
// "opac:" for the address), so that patrons' failures never lock a staff account
// or a desk computer's address, nor the reverse. As for staff, the card's count
// is shared by the addresses it has not signed in from (an IPv6 address counts
// with its /64); from an address it signed in from before, wrong PINs count
// under "card:<card> <address>" alone.
type SignIn struct {
	DB       *db.DB
	Throttle staff.Throttle

	inFlight passwords.Gate
}

// KnownCard is the name under which signin_addresses remembers the addresses a
// card signed in from (passwords.IsKnown).
func KnownCard(card string) string { return "card:" + card }

// NewSignIn returns a SignIn with staff sign-in's default throttle: five wrong
// PINs within fifteen minutes lock a card for fifteen minutes, twenty lock an
// address.
func NewSignIn(d *db.DB) *SignIn { return &SignIn{DB: d, Throttle: staff.DefaultThrottle} }

// ErrSignIn is the one answer for an unknown card, a wrong PIN and a card
// without a PIN: a stranger learns nothing of which cards exist.
var ErrSignIn = stacks.Errorf(stacks.EUNAUTHORIZED, "The card number or PIN is not right. Check them and try again; if you have no PIN yet, ask at the desk.")

var errSignInBusy = stacks.Errorf(stacks.ETOOMANY, "A sign-in for this card is already being checked. Wait a moment and try again.")

// possibleCard reports whether s can be a card number: 1 to 64 bytes of text
// without spaces or control characters.
func possibleCard(s string) bool {
	return s != "" && len(s) <= 64 && utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// Authenticate checks a card number and PIN from the address addr and returns the
// patron's id. A failure runs the same statements whether the card exists or not,
// and compares against a dummy hash when there is no PIN to compare.
func (s *SignIn) Authenticate(ctx context.Context, card, pin, addr string) (int64, error) {
	p, err := s.AuthenticatePatron(ctx, card, pin, addr)
	return p.ID, err
}

// SignedIn is a patron who signed in: their id, and the generation of the PIN
// they signed in with (Patron.PINGeneration), which their session keeps.
type SignedIn struct {
	ID            int64
	PINGeneration int64
}

// AuthenticatePatron is Authenticate, returning the PIN's generation too, read
// with the hash that was compared.
func (s *SignIn) AuthenticatePatron(ctx context.Context, card, pin, addr string) (SignedIn, error) {
	id, gen, err := s.authenticate(ctx, card, pin, addr)
	return SignedIn{ID: id, PINGeneration: gen}, err
}

func (s *SignIn) authenticate(ctx context.Context, card, pin, addr string) (int64, int64, error) {
	card = normalizeCard(card)
	if card == "" || pin == "" {
		return 0, 0, stacks.Errorf(stacks.EINVALID, "Enter your card number and PIN.")
	}
	if len(pin) > 72 {
		return 0, 0, ErrSignIn
	}
	cardKey := "card:" + card
	if !possibleCard(card) {
		cardKey = "card:(not a card)"
	}
	// An address is an IPv4 address or an IPv6 /64. One attempt per card is
	// checked at a time, from whatever address.
	addrKey := passwords.AddrKey(addr)
	keys := []string{cardKey, "opac:" + addrKey}

	// A locked card is refused before it waits for a turn. The same statement
	// that reads the locks tells whether the card signed in from this address
	// before: then its wrong PINs count for this address alone (card:<card>
	// <address>), and its turn is taken under that key, so that guesses from
	// elsewhere, which share the card's key, can neither lock the patron out at
	// home nor hold the patron's turn.
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		account := ""
		if possibleCard(card) {
			account = KnownCard(card)
		}
		// A space, which no possible card has, parts card and address: no card
		// number can make its key another card's key at an address.
		perAddr := cardKey + " " + addrKey
		l, err := passwords.ReadLocks(tx, account, addrKey, cardKey, perAddr, keys[1])
		if err != nil {
			return err
		}
		if l.Known {
			keys[0] = perAddr
		}
		return lockedError(tx.Now(), l.Until, keys)
	})
	if err != nil {
		return 0, 0, err
	}
	t := s.Throttle
	leave, ok := s.inFlight.Enter(ctx, t.InFlightWait,
		passwords.Key{Name: keys[0], Max: t.MaxInFlight, MaxWaiting: t.MaxWaiting},
		passwords.Key{Name: keys[1], Max: t.MaxAddrInFlight, MaxWaiting: t.MaxWaiting})
	if !ok {
		return 0, 0, errSignInBusy
	}
	defer leave()
	var (
		id, gen int64
		hash    string
	)
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := s.checkLocked(tx, keys); err != nil {
			return err
		}
		if err := s.recordFailure(tx, keys); err != nil {
			return fmt.Errorf("count sign-in attempt: %w", err)
		}
		if !possibleCard(card) {
			// No patron has it: not looked up (PostgreSQL refuses a NUL
			// byte in text, where SQLite would find nothing).
			id, hash = 0, ""
			return nil
		}
		err := tx.QueryRow(`SELECT id, pin_hash, pin_generation FROM patrons WHERE card = ?`, card).Scan(&id, &hash, &gen)
		if errors.Is(err, sql.ErrNoRows) {
			id, hash = 0, ""
			return nil
		}
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	// staff.CheckPassword compares an empty hash against a dummy one: the time
	// taken does not tell which cards exist or have a PIN.
	match, err := staff.CheckPassword(ctx, hash, pin)
	if err != nil {
		return 0, 0, err
	}
	if !match || id == 0 {
		return 0, 0, ErrSignIn
	}
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := s.clearAttempt(tx, keys, keys[0] != cardKey); err != nil {
			return err
		}
		if err := passwords.RememberAddress(tx, KnownCard(card), addrKey); err != nil {
			return err
		}
		return tx.Audit(stacks.Actor{Name: "opac:" + card}, "patron.signin", "patron", id, "from "+addr)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("record sign-in: %w", err)
	}
	return id, gen, nil
}

// CheckCurrentPIN checks a signed-in patron's current PIN (before a change),
// counted and throttled like a sign-in: a stolen session cannot guess the PIN
// faster than a stranger could.
func (s *SignIn) CheckCurrentPIN(ctx context.Context, patronID int64, pin, addr string) error {
	var card string
	err := s.DB.ReadOne(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT card FROM patrons WHERE id = ?`, patronID).Scan(&card)
	})
	if err != nil {
		return fmt.Errorf("find card of patron %d: %w", patronID, err)
	}
	id, err := s.Authenticate(ctx, card, pin, addr)
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EUNAUTHORIZED || stacks.ErrorCode(err) == stacks.EINVALID {
			return stacks.FieldErrorf("current", stacks.EINVALID, "Your current PIN is not right. Type it again.")
		}
		return err
	}
	if id != patronID {
		return stacks.FieldErrorf("current", stacks.EINVALID, "Your current PIN is not right. Type it again.")
	}
	return nil
}

func (s *SignIn) checkLocked(tx *db.Tx, keys []string) error {
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
			mins := max(int(wait.Round(time.Minute)/time.Minute), 1)
			what := "this card"
			if strings.HasPrefix(key, "opac:") {
				what = "this computer"
			}
			return stacks.Errorf(stacks.ETOOMANY, "Too many wrong PINs for %s. Wait %d minute(s) and try again, or ask at the desk.", what, mins)
		}
	}
	return nil
}

// recordFailure counts an attempt under both keys before its PIN is compared,
// and locks a key that reaches its limit (as staff.Service does): one
// statement, the count and the lock of each key.
func (s *SignIn) recordFailure(tx *db.Tx, keys []string) error {
	t := s.Throttle
	return passwords.CountFailure(tx, keys, t.Window, t.Lockout, t.MaxFailures, t.MaxAddrFailures)
}

// clearAttempt takes back the count of an attempt that succeeded (see
// passwords.GiveBack): a sign-in from a new address gives back its own attempt
// only, not the budget the card's unknown addresses share.
func (s *SignIn) clearAttempt(tx *db.Tx, keys []string, known bool) error {
	return passwords.GiveBack(tx, keys, known, s.Throttle.MaxFailures, s.Throttle.MaxAddrFailures)
}
