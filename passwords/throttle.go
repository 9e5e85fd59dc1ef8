package passwords

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Throttle limits failed sign-ins: after MaxFailures failures within Window for one
// account (a staff account, a patron's card), or MaxAddrFailures from one address,
// sign-ins for it are refused for Lockout. The address limit is higher: a
// branch's desks may share one address. An address is an IPv4 address or an
// IPv6 /64 (AddrKey).
//
// The account's count is shared by the addresses it has not signed in from
// within KnownFor: guesses rotated over many addresses meet one budget of
// MaxFailures a Window, and spending it locks only those addresses out. From
// an address the account signed in from before (a desk, a patron's home),
// failures count for that account and address alone, so that guesses from
// elsewhere never lock them out.
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

// DefaultThrottle is the throttle of staff and patrons' sign-in: five failures
// within fifteen minutes lock an account for fifteen minutes, twenty lock an
// address.
var DefaultThrottle = Throttle{MaxFailures: 5, MaxAddrFailures: 20, Window: 15 * time.Minute, Lockout: 15 * time.Minute,
	MaxInFlight: 1, MaxAddrInFlight: 4, MaxWaiting: 128, InFlightWait: 10 * time.Second}

// Words are what a Limiter's refusals say, in the words of its site.
type Words struct {
	// AddrPrefix starts the keys of addresses in login_throttle ("addr:" for
	// staff, "opac:" for patrons), so that one site's failures never lock the
	// other's users out.
	AddrPrefix string
	// Account and Failures complete "Too many <Failures> for <Account>"
	// ("failed sign-ins", "this account"); Ask ends the refusal ("ask an
	// administrator").
	Account, Failures, Ask string
	// Busy refuses an attempt while another for the same account, or too many
	// from the same address, are being checked.
	Busy error
}

// Limiter counts the sign-in attempts of one site under Throttle, in
// login_throttle, and admits a few at a time per account and per address.
// Staff sign-in and patrons' sign-in each have one.
type Limiter struct {
	Throttle Throttle
	Words    Words

	// inFlight holds the attempts being checked, per account and per address.
	inFlight Gate
}

// Attempt is one sign-in going through a Limiter: Begin reads its locks, Wait
// takes its turn, Count counts it before its password is compared, Succeeded
// takes the count back, and Done ends its turn.
type Attempt struct {
	l *Limiter
	// keys[0] is the account's key (at the address when the address is known,
	// else the budget its unknown addresses share), keys[1] the address's.
	keys    []string
	known   bool
	account string
	addr    string
	leave   func()
}

// Begin starts an attempt for the account whose login_throttle key is key
// ("user:desk", "card:P0001"), from addr, inside the read transaction in which
// the caller reads what else it needs: one statement reads the locks and
// whether account (the name of signin_addresses, "" when no account can have
// the name tried) signed in from addr before. A locked account or address is
// refused (ETOOMANY) before the attempt waits for a turn.
func (l *Limiter) Begin(tx *db.Tx, key, account, addr string) (*Attempt, error) {
	addrKey := AddrKey(addr)
	a := &Attempt{l: l, keys: []string{key, l.Words.AddrPrefix + addrKey}, account: account, addr: addrKey}
	// A space, which no possible name has, parts name and address: no name can
	// make its key another account's key at an address.
	perAddr := key + " " + addrKey
	locks, err := ReadLocks(tx, account, addrKey, key, perAddr, a.keys[1])
	if err != nil {
		return nil, err
	}
	if locks.Known {
		// Its failures count for this address alone, and its turn is taken
		// under that key too: guesses from elsewhere, which share the
		// account's key, can neither lock it out nor hold its turn.
		a.keys[0], a.known = perAddr, true
	}
	return a, l.lockedError(tx.Now(), locks.Until, a.keys)
}

// Wait takes the attempt's turn: one attempt per account and a few per address
// are checked at a time, so that parallel guesses cannot pass the lock before
// the first is counted. It returns Words.Busy when no turn came.
func (a *Attempt) Wait(ctx context.Context) error {
	t := a.l.Throttle
	leave, ok := a.l.inFlight.Enter(ctx, t.InFlightWait,
		Key{Name: a.keys[0], Max: t.MaxInFlight, MaxWaiting: t.MaxWaiting},
		Key{Name: a.keys[1], Max: t.MaxAddrInFlight, MaxWaiting: t.MaxWaiting})
	if !ok {
		return a.l.Words.Busy
	}
	a.leave = leave
	return nil
}

// Done ends the attempt's turn (after Wait).
func (a *Attempt) Done() {
	if a.leave != nil {
		a.leave()
	}
}

// Count checks the locks again and counts the attempt under both its keys,
// inside the write transaction that reads the password's hash: no other
// attempt can come between the check and the count. The attempt that reaches a
// limit is still compared, the ones after it are refused.
func (a *Attempt) Count(tx *db.Tx) error {
	locks, err := ReadLocks(tx, "", "", a.keys...)
	if err != nil {
		return err
	}
	if err := a.l.lockedError(tx.Now(), locks.Until, a.keys); err != nil {
		return err
	}
	t := a.l.Throttle
	if err := CountFailure(tx, a.keys, t.Window, t.Lockout, t.MaxFailures, t.MaxAddrFailures); err != nil {
		return fmt.Errorf("count sign-in attempt: %w", err)
	}
	return nil
}

// Succeeded takes back the count of an attempt whose password was right
// (GiveBack), and remembers its address as known for its account, inside the
// transaction that records the sign-in.
func (a *Attempt) Succeeded(tx *db.Tx) error {
	t := a.l.Throttle
	if err := GiveBack(tx, a.keys, a.known, t.MaxFailures, t.MaxAddrFailures); err != nil {
		return err
	}
	if a.account == "" {
		return nil
	}
	return RememberAddress(tx, a.account, a.addr)
}

// lockedError refuses a sign-in while one of its keys is locked at now, saying
// which and for how long.
func (l *Limiter) lockedError(now time.Time, until map[string]time.Time, keys []string) error {
	w := l.Words
	for _, key := range keys {
		if wait := until[key].Sub(now); wait > 0 {
			mins := max(int(wait.Round(time.Minute)/time.Minute), 1)
			what := w.Account
			if strings.HasPrefix(key, w.AddrPrefix) {
				what = "this computer"
			}
			return stacks.Errorf(stacks.ETOOMANY, "Too many %s for %s. Wait %d minute(s) and try again, or %s.", w.Failures, what, mins, w.Ask)
		}
	}
	return nil
}
