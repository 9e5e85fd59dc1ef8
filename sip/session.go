package sip

import (
	"context"
	"crypto/sha256"
	"errors"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

// login answers 93 with 94 (answered false: no answer). A terminal may log in
// again on the same connection (as another account); a failed login leaves it
// logged out. After maxLoginFailures failures the connection is closed. Each
// login is counted against its account and address before the password is
// compared (five lock them for 15 minutes), and from an address the account has
// not logged in from against the account's budget too (ten an hour lock every
// such address, never a known one: see throttle), and one per account and address,
// maxHostLoginsInFlight per address, is checked at a time, with
// maxLoginsWaiting more waiting their turn for up to Config.CheckWait.
//
// A login that could not be checked in that time (the comparison pool busy for
// seconds) is not answered, and not counted as a failure: 940 would tell the
// terminal that its password is wrong, and SIP2 2.00 has no other answer for
// it. The terminal waits its timeout and sends it again, as it does for a lost
// message; the connection stays as it was (logged in as before, or not, its time
// to log in running). The same login sent again on a connection it logged in (a
// terminal that logs in again now and then) is not compared again while the
// account's password hash is unchanged and the account is neither deactivated
// nor locked at the address.
func (c *conn) login(ctx context.Context, m *Message) (answered, keep bool) {
	user := m.Get("CN")
	var err error
	acct := c.relogin(ctx, m)
	if acct == nil {
		acct, err = c.checkLogin(ctx, m)
	}
	if stacks.ErrorCode(err) == stacks.ETOOMANY {
		c.s.log.Warn("sip login not answered: it could not be checked in time (other logins and PINs are being checked); the terminal will send it again",
			"conn", c.id, "remote", c.remote, "user", user, "waited", c.s.cfg.CheckWait)
		return false, true
	}
	c.account = nil
	c.authed.Store(false)
	c.resp.start("94")
	if err != nil {
		c.verified = verifiedLogin{}
		c.resp.ok(false)
		c.loginFailures++
		if stacks.ErrorCode(err) == stacks.EUNAUTHORIZED {
			c.s.log.Info("sip login failed", "conn", c.id, "remote", c.remote, "user", user)
		} else {
			c.internalError(ctx, "login", err)
		}
		if c.loginFailures >= maxLoginFailures {
			c.s.log.Warn("sip: too many failed logins; connection closed", "conn", c.id, "remote", c.remote, "user", user)
			return true, false
		}
		return true, true
	}
	c.account, c.accountAt = acct, time.Now()
	c.authed.Store(true)
	c.loginFailures, c.unauthenticated = 0, 0
	c.s.log.Info("sip login", "conn", c.id, "remote", c.remote, "user", acct.Username, "institution", acct.Institution, "branch", acct.BranchCode)
	c.resp.ok(true)
	return true, true
}

// verifiedLogin is the login that succeeded last on a connection: a SHA-256 of
// its username and password, and the stored hash they matched.
type verifiedLogin struct {
	sum  [sha256.Size]byte
	hash string
}

func loginSum(m *Message) [sha256.Size]byte {
	return sha256.Sum256([]byte(strings.ToLower(m.Get("CN")) + "\x00" + m.Get("CO")))
}

// relogin returns the account of a login the connection made before with the
// same username and password, when its password hash has not changed since, it
// is still active and not locked at this address; nil when the login must be
// checked (then as any other, counted and compared).
func (c *conn) relogin(ctx context.Context, m *Message) *Account {
	if c.verified.hash == "" || c.verified.sum != loginSum(m) || m.Fixed != "00" {
		return nil
	}
	var (
		acct *Account
		hash string
	)
	err := c.s.cfg.DB.Read(ctx, func(tx *db.Tx) error {
		var err error
		acct, hash, err = accountWithHash(tx, m.Get("CN"))
		return err
	})
	if err != nil || acct == nil || !acct.Active || hash != c.verified.hash {
		return nil
	}
	if locked, err := c.isLocked(ctx, loginKey(strings.ToLower(m.Get("CN")), c.addr)); err != nil || locked {
		return nil
	}
	return acct
}

// checkLogin checks the account and password of a login: counted against the
// account and address (an IPv6 client's /64), and from an address the account
// has not logged in from against the account's budget too, before the password
// is compared; one at a time per account and address.
func (c *conn) checkLogin(ctx context.Context, m *Message) (*Account, error) {
	user, pass := m.Get("CN"), m.Get("CO")
	host, _, _ := net.SplitHostPort(c.remote)
	lower := strings.ToLower(user)
	attempt, cmpCtx, err := c.begin(ctx, accountKey(lower), knownAccount(lower))
	if err != nil {
		return nil, err
	}
	defer attempt.Done()
	if attempt.Refused() != "" {
		why := "too many failures for this account from this address"
		if attempt.Refused() == accountKey(lower) {
			why = "too many failures for this account from addresses it has not logged in from"
		}
		c.s.log.Warn("sip login refused: "+why, "conn", c.id, "remote", c.remote, "user", user)
		return nil, errBadLogin
	}
	if m.Fixed != "00" || user == "" || pass == "" {
		// Algorithms "0": plain text, the only ones the specification defines.
		return nil, errBadLogin
	}
	acct, hash, err := authenticate(cmpCtx, c.s.cfg.DB, user, pass)
	switch {
	case err == nil:
		// One write: the failures forgotten, and the account seen.
		c.seenAt = time.Now()
		err = c.s.cfg.DB.Write(ctx, func(tx *db.Tx) error {
			if err := attempt.Succeeded(tx); err != nil {
				return err
			}
			return touchAccount(tx, acct.ID, host)
		})
		if err != nil {
			return nil, err
		}
		c.verified = verifiedLogin{sum: loginSum(m), hash: hash}
	case stacks.ErrorCode(err) == stacks.ETOOMANY:
		// Not compared: the attempt does not count.
		c.notCompared(ctx, attempt, "give back a login attempt")
	case setLock(attempt, loginKey(lower, c.addr)):
		c.s.log.Warn("sip logins locked for 15 minutes at this address: too many failures", "remote", c.remote, "user", user)
	case setLock(attempt, accountKey(lower)):
		c.s.log.Warn("sip logins locked for an hour at every address the account has not logged in from: too many failures from such addresses", "remote", c.remote, "user", user)
	}
	return acct, err
}

// begin starts an attempt under key (throttle.go's keys choose what it counts
// and waits under; account is the name of signin_addresses whose known address
// matters, "" for a PIN): a login reads its locks and whether its address is
// known, a PIN nothing; it waits for its turn for up to Config.CheckWait, and
// is counted in one write transaction that refuses a locked key. An attempt
// refused by a lockout is returned with Refused set, uncounted, and no error;
// one that got no turn, with passwords.ErrBusy. cmpCtx is the context of the
// comparison, under which the wait for a slot of the comparison pool is what
// is left of CheckWait. Only the waits are bounded: the reads and writes run to
// their end, so that a check admitted late is not cut off halfway with its
// attempt counted. The caller calls attempt.Done when the check is over.
func (c *conn) begin(ctx context.Context, key, account string) (attempt *passwords.Attempt, cmpCtx context.Context, err error) {
	deadline := time.Now().Add(c.s.cfg.CheckWait)
	if account == "" {
		attempt, err = c.s.limiter.Begin(nil, key, "", c.addr)
	} else {
		err = c.s.cfg.DB.Read(ctx, func(tx *db.Tx) (err error) {
			attempt, err = c.s.limiter.Begin(tx, key, account, c.addr)
			return err
		})
	}
	if err == nil {
		if err = attempt.Wait(ctx); err == nil {
			err = c.s.cfg.DB.Write(ctx, attempt.Count)
		}
	}
	if attempt != nil {
		c.s.lockouts.note(c.now(), attempt.Lockouts())
		if attempt.Refused() != "" {
			return attempt, nil, nil
		}
	}
	if err != nil {
		if attempt != nil {
			attempt.Done()
		}
		return nil, nil, err
	}
	return attempt, passwords.WithWait(ctx, max(time.Until(deadline), 0)), nil
}

// notCompared gives back an attempt the comparison pool had no room for, with
// the lockouts it set.
func (c *conn) notCompared(ctx context.Context, attempt *passwords.Attempt, what string) {
	if err := c.s.cfg.DB.Write(ctx, attempt.NotCompared); err != nil {
		c.internalError(ctx, what, err)
		return
	}
	c.s.lockouts.forget(slices.Collect(maps.Keys(attempt.Lockouts()))...)
}

// setLock reports whether the count of attempt (not refused) locked key.
func setLock(attempt *passwords.Attempt, key string) bool {
	_, ok := attempt.Lockouts()[key]
	return ok
}

// isLocked reads whether key is locked out now; it forgets a lockout noted
// that the database no longer has (lifted by staff).
func (c *conn) isLocked(ctx context.Context, key string) (bool, error) {
	var locked bool
	err := c.s.cfg.DB.Read(ctx, func(tx *db.Tx) error {
		locks, err := passwords.ReadLocks(tx, "", "", key)
		locked = tx.Now().Before(locks.Until[key])
		return err
	})
	if err == nil && !locked {
		c.s.lockouts.forget(key)
	}
	return locked, err
}

// status answers 99 (SC status) with 98 (ACS status).
func (c *conn) status(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	r := &c.resp
	r.start("98")
	set := &c.account.Settings
	r.fixed("Y")                                 // on-line
	r.flag(set.Allows("09"))                     // checkin ok
	r.flag(set.Allows("11"))                     // checkout ok
	r.flag(set.Allows("29") || set.Allows("65")) // ACS renewal policy: renewals allowed
	r.flag(set.Allows("19"))                     // status update ok: item status update (19) stores the item properties
	r.fixed("N")                                 // off-line ok: loans are not back-dated to an off-line time
	r.fixed("100")                               // timeout period, tenths of a second
	r.fixed("003")                               // retries allowed
	r.date(c.now(), prefs.Location)
	r.fixed("2.00")
	r.field("AO", c.account.Institution)
	r.field("AM", prefs.LibraryName)
	r.field("BX", set.supported())
	r.field("AN", c.account.BranchCode)
}

// endSession answers 35 with 36. The connection stays logged in; the PIN verified
// on it is forgotten, so that the next patron at the terminal starts afresh.
func (c *conn) endSession(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	c.pin = verifiedPIN{}
	r := &c.resp
	r.start("36")
	r.fixed("Y")
	r.date(c.now(), prefs.Location)
	r.field("AO", c.account.Institution)
	r.field("AA", m.Get("AA"))
	r.field("AF", "Thank you. Your session has ended.")
}

// now is the transaction time of an answer: the database's clock, which tests set.
func (c *conn) now() time.Time { return c.s.cfg.DB.Now() }

// preferences returns the library's preferences; on an error (logged) the defaults,
// so that an answer can still be given.
func (c *conn) preferences(ctx context.Context) library.Preferences {
	p, err := c.s.preferences(ctx)
	if err != nil {
		c.internalError(ctx, "read preferences", err)
		return library.Preferences{LibraryName: "Library", FinesLimitCents: 500, Location: time.UTC}
	}
	return p
}

// actor is the logged-in account as the actor of writes.
func (c *conn) actor() stacks.Actor { return c.account.Actor() }

// verifiedPIN is the PIN that matched the stored hash of the patron served on a
// connection: its SHA-256, the hash, and when it was last used.
type verifiedPIN struct {
	patronID int64
	hash     string
	sum      [sha256.Size]byte
	at       time.Time
}

// pinSessionIdle is how long a terminal keeps a patron's verified PIN without a
// message for that patron: a patron who walks away without ending the session
// (35) is forgotten, and anyone who comes to the terminal later is asked again.
const pinSessionIdle = 5 * time.Minute

// forgetPIN ends the patron session of the connection unless it is patronID's:
// a message for another patron means another patron is at the terminal.
func (c *conn) forgetPIN(patronID int64) {
	if c.pin.patronID != patronID {
		c.pin = verifiedPIN{}
	}
}

// checkPIN compares a PIN with a patron's stored hash. bcrypt takes tens of
// milliseconds by design, and a self-check sends the PIN with every message of a
// patron's session, so a PIN that matched is remembered for the patron in front
// of the terminal (as a SHA-256, with the stored hash it matched) until an end
// patron session (35), a message for another patron, or pinSessionIdle without
// one: the patron's next messages cost a comparison of two sums, and touch
// neither the database's lockouts nor the comparison pool. A changed PIN hash, or
// a different PIN, is compared again.
//
// Ten PINs compared for a patron within 15 minutes, from any terminal, lock the
// patron's PIN for 15 minutes (locked is then true) unless one was right: four
// digits are quickly guessed otherwise. Each is counted (in login_throttle) before
// it is compared, and one PIN per patron is compared at a time: others wait their
// turn, as a check waits for a slot of the comparison pool, for up to
// Config.CheckWait in all. One that got no turn by then is not compared and not counted (busy):
// the terminal is told so, not that the PIN is wrong.
func (c *conn) checkPIN(ctx context.Context, patronID int64, hash, pin string) (ok, locked, busy bool) {
	sum := sha256.Sum256([]byte(pin))
	now := c.now()
	if v := c.pin; v.patronID == patronID && v.hash == hash && v.sum == sum && now.Sub(v.at) < pinSessionIdle {
		// Remembered: no comparison, and no database unless this process locked
		// the patron's PIN since (ten wrong PINs at another terminal), or met
		// its lockout: a lockout holds on every terminal, this one included.
		if c.s.lockouts.mayBeLocked(now, pinKey(patronID)) {
			isLocked, err := c.isLocked(ctx, pinKey(patronID))
			switch {
			case err != nil:
				c.internalError(ctx, "read PIN lockout", err)
				return false, false, true
			case isLocked:
				c.pin = verifiedPIN{}
				return false, true, false
			}
		}
		c.pin.at = now
		return true, false, false
	}
	attempt, cmpCtx, err := c.begin(ctx, pinKey(patronID), "")
	switch {
	case errors.Is(err, passwords.ErrBusy):
		c.s.log.Warn("sip: PIN not checked: another PIN for the patron was being checked for too long", "conn", c.id, "remote", c.remote, "patron_id", patronID, "waited", c.s.cfg.CheckWait)
		return false, false, true
	case err != nil:
		c.internalError(ctx, "count PIN attempt", err)
		return false, false, true
	}
	defer attempt.Done()
	if attempt.Refused() != "" {
		return false, true, false
	}
	match, err := patrons.CheckPIN(cmpCtx, hash, pin)
	if err != nil {
		c.s.log.Warn("sip: PIN not compared: the comparison pool had no room in time", "conn", c.id, "remote", c.remote, "patron_id", patronID, "waited", c.s.cfg.CheckWait)
		c.notCompared(ctx, attempt, "give back a PIN attempt")
		return false, false, true
	}
	if !match {
		if setLock(attempt, pinKey(patronID)) {
			c.s.log.Warn("sip: PIN locked for 15 minutes after too many wrong PINs", "conn", c.id, "remote", c.remote, "patron_id", patronID)
		}
		return false, false, false
	}
	if err := c.s.cfg.DB.Write(ctx, attempt.Succeeded); err != nil {
		c.internalError(ctx, "forget PIN failures", err)
	}
	c.pin = verifiedPIN{patronID: patronID, hash: hash, sum: sum, at: now}
	return true, false, false
}

// needs says what findPatron reads beside the patron.
type needs uint8

const (
	needStanding needs = 1 << iota
	needLoans
	needHolds
	needLedger
	// needHoldCopies: with needHolds, a copy's barcode for each title-level hold
	// not yet given an item, when the account lists hold items by barcode.
	needHoldCopies
)

// patronView is a patron as a message sees them: found or not, and whether the PIN
// (AD) the terminal sent, if any, is right.
type patronView struct {
	card     string
	p        *patrons.Patron
	pinGiven bool
	pinOK    bool
	// pinLocked: too many wrong PINs; pinBusy: another PIN for the patron, or too
	// many PINs at once, were being checked. Either way the PIN was not compared.
	pinLocked bool
	pinBusy   bool
	standing  patrons.StandingSummary
	// maxLoans is the loan limit of the patron's general rule, -1 if none.
	maxLoans int
	loans    []circulation.Loan
	holds    []holds.Hold
	// copies are, for the title-level holds not yet given an item, the barcode
	// of one copy of each title (by record id), when the account lists hold
	// items by barcode.
	copies map[int64]string
	ledger []patrons.LedgerEntry
}

// authorized: the patron exists, and the PIN is right or none was sent. A PIN field
// sent empty is a PIN, and matches nothing: a terminal that sends AD means to
// check it.
func (v *patronView) authorized() bool { return v.p != nil && (!v.pinGiven || v.pinOK) }

// findPatron reads the patron of the AA field and what need asks for, in one read
// transaction, then checks the PIN (AD) outside it.
func (c *conn) findPatron(ctx context.Context, m *Message, need needs) (patronView, error) {
	v := patronView{card: m.Get("AA"), maxLoans: -1}
	pin, pinGiven := m.Lookup("AD")
	v.pinGiven = pinGiven
	var hash string
	err := c.s.cfg.DB.Read(ctx, func(tx *db.Tx) error {
		p, err := patrons.FindByCard(tx, v.card)
		switch stacks.ErrorCode(err) {
		case "":
		case stacks.ENOTFOUND, stacks.EINVALID:
			return nil
		default:
			return err
		}
		v.p = p
		if pinGiven {
			if hash, err = patrons.PINHash(tx, p.ID); err != nil {
				return err
			}
		}
		if need&needStanding != 0 {
			if v.standing, err = patrons.Standing(tx, p.ID); err != nil {
				return err
			}
			if rule, err := circulation.ResolveRule(tx, p.CategoryID, 0, c.account.BranchID); err == nil {
				v.maxLoans = rule.MaxLoans
			} else if stacks.ErrorCode(err) == stacks.EINTERNAL {
				return err
			}
		}
		if need&needLoans != 0 {
			if v.loans, err = circulation.PatronLoans(tx, p.ID); err != nil {
				return err
			}
		}
		if need&needHolds != 0 {
			if v.holds, err = holds.PatronHolds(tx, p.ID); err != nil {
				return err
			}
			if need&needHoldCopies != 0 && c.account.Settings.HoldItems != HoldItemsTitle {
				for _, h := range v.holds {
					if h.TrappedBarcode != "" || h.ItemBarcode != "" {
						continue
					}
					if v.copies == nil {
						v.copies = map[int64]string{}
					}
					if v.copies[h.RecordID], err = catalog.CopyBarcode(tx, h.RecordID); err != nil {
						return err
					}
				}
			}
		}
		if need&needLedger != 0 {
			if v.ledger, err = patrons.Ledger(tx, p.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return patronView{card: v.card, maxLoans: -1}, err
	}
	if v.p != nil {
		c.forgetPIN(v.p.ID)
	}
	if v.p != nil && pinGiven {
		v.pinOK, v.pinLocked, v.pinBusy = c.checkPIN(ctx, v.p.ID, hash, pin)
	}
	return v, nil
}

// Screen messages about the patron in front of the terminal.
const (
	msgPatronNotFound = "Your card was not found. Please see staff at the desk."
	msgWrongPIN       = "The PIN is not right. Please try again."
	msgPINLocked      = "Too many wrong PINs. Please see staff at the desk."
	msgPINBusy        = "Your PIN could not be checked just now. Please try again in a moment."
	msgTryAgain       = "That did not work. Please try again, or see staff at the desk."
)

// pinMessage says why the PIN was not accepted.
func (v *patronView) pinMessage() string {
	switch {
	case v.pinLocked:
		return msgPINLocked
	case v.pinBusy:
		return msgPINBusy
	}
	return msgWrongPIN
}

// problem returns why the patron cannot borrow or renew, for the screen: no such
// card, a wrong PIN, an expired card, a block by staff; "" when none of these.
func (v *patronView) problem(prefs library.Preferences, now time.Time) string {
	switch {
	case v.p == nil:
		return msgPatronNotFound
	case v.pinGiven && !v.pinOK:
		return v.pinMessage()
	case v.p.Expired(now.In(prefs.Location)):
		return blockMessage(circulation.BlockCardExpired)
	case v.p.Blocked:
		return blockMessage(circulation.BlockPatronBlocked)
	}
	return ""
}

// msgCardLost is the screen message for a card reported lost.
const msgCardLost = "This card has been reported lost. Please see staff at the desk."

// statusMessage is the screen message of a patron status (24) or patron
// information (64): why the PIN or card was not accepted (problem), else every
// block the patron status flags report, each in words (an expired card, a block
// by staff, a card reported lost, fines over the limit, the loan limit
// reached), so that a terminal that shows only AF tells the patron what the
// flags say. "" when there is none.
func (v *patronView) statusMessage(prefs library.Preferences, now time.Time) string {
	if !v.authorized() {
		return v.problem(prefs, now)
	}
	var msgs []string
	if v.p.Expired(now.In(prefs.Location)) {
		msgs = append(msgs, blockMessage(circulation.BlockCardExpired))
	}
	if v.p.Blocked {
		msgs = append(msgs, blockMessage(circulation.BlockPatronBlocked))
	}
	if v.p.CardLost {
		msgs = append(msgs, msgCardLost)
	}
	if v.standing.BalanceCents > prefs.FinesLimitCents {
		msgs = append(msgs, blockMessage(circulation.BlockFines))
	}
	if v.maxLoans >= 0 && v.standing.Loans >= v.maxLoans {
		msgs = append(msgs, blockMessage(circulation.BlockMaxLoans))
	}
	return strings.Join(msgs, " ")
}

// patronStatus appends the 14 flags of the patron status fixed field: charge,
// renewal, recall and hold privileges denied; card reported lost; too many items
// charged; excessive outstanding fines. A patron who is not found, or whose PIN is
// wrong, is denied everything.
func (r *response) patronStatus(v *patronView, prefs library.Preferences, now time.Time) {
	var s [14]byte
	for i := range s {
		s[i] = ' '
	}
	denied := !v.authorized() || v.p.Expired(now.In(prefs.Location)) || v.p.Blocked
	tooMany, fines := false, false
	if v.authorized() {
		tooMany = v.maxLoans >= 0 && v.standing.Loans >= v.maxLoans
		fines = v.standing.BalanceCents > prefs.FinesLimitCents
	}
	mark := func(i int, on bool) {
		if on {
			s[i] = 'Y'
		}
	}
	mark(0, denied || tooMany || fines)
	mark(1, denied)
	mark(2, denied)
	mark(3, denied)
	mark(4, v.authorized() && v.p.CardLost)
	mark(5, tooMany)
	mark(10, fines)
	r.b = append(r.b, s[:]...)
}
