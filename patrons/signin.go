package patrons

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
)

// SignIn lets patrons sign in to the patrons' catalogue with their card number
// and PIN, throttled as staff sign-in is (passwords.Throttle): every attempt is
// counted, per card and per address, before its PIN is compared, in the same
// write transaction that checks the lock; one attempt per card and a few per
// address are compared at a time; the comparisons run on the bounded pool of
// package passwords. A four-digit PIN is quickly guessed otherwise.
//
// The counts live in login_throttle, under keys of their own ("card:" and
// "opac:" for the address), so that patrons' failures never lock a staff account
// or a desk computer's address, nor the reverse. As for staff, the card's count
// is shared by the addresses it has not signed in from (an IPv6 address counts
// with its /64); from an address it signed in from before, wrong PINs count
// under "card:<card> <address>" alone.
type SignIn struct {
	DB *db.DB

	limiter *passwords.Limiter
}

// KnownCard is the name under which signin_addresses remembers the addresses a
// card signed in from (passwords.RememberAddress).
func KnownCard(card string) string { return "card:" + card }

// NewSignIn returns a SignIn with staff sign-in's default throttle
// (passwords.DefaultThrottle): five wrong PINs within fifteen minutes lock a
// card for fifteen minutes, twenty lock an address.
func NewSignIn(d *db.DB) *SignIn {
	return &SignIn{DB: d, limiter: &passwords.Limiter{Throttle: passwords.DefaultThrottle, Words: signInWords}}
}

// signInWords are the refusals of patrons' sign-in's throttle.
var signInWords = passwords.Words{AddrPrefix: "opac:", Account: "this card", Failures: "wrong PINs", Ask: "ask at the desk",
	Busy: stacks.Errorf(stacks.ETOOMANY, "A sign-in for this card is already being checked. Wait a moment and try again.")}

// ErrSignIn is the one answer for an unknown card, a wrong PIN and a card
// without a PIN: a stranger learns nothing of which cards exist.
var ErrSignIn = stacks.Errorf(stacks.EUNAUTHORIZED, "The card number or PIN is not right. Check them and try again; if you have no PIN yet, ask at the desk.")

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
	cardKey, account := "card:"+card, KnownCard(card)
	if !possibleCard(card) {
		cardKey, account = "card:(not a card)", ""
	}
	// A locked card, or address, is refused before it waits for a turn.
	var attempt *passwords.Attempt
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		var err error
		attempt, err = s.limiter.Begin(tx, cardKey, account, addr)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	if err := attempt.Wait(ctx); err != nil {
		return 0, 0, err
	}
	defer attempt.Done()
	var (
		id, gen int64
		hash    string
	)
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := attempt.Count(tx); err != nil {
			return err
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
	// passwords.Check compares an empty hash against a dummy one: the time
	// taken does not tell which cards exist or have a PIN.
	match, err := passwords.Check(ctx, hash, pin)
	if err != nil {
		return 0, 0, err
	}
	if !match || id == 0 {
		return 0, 0, ErrSignIn
	}
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := attempt.Succeeded(tx); err != nil {
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
