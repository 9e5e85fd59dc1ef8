package sip_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/sip"
	"github.com/stacks-ils/stacks/waittest"
)

// startServer starts another server on e's database (as a restart would) and
// returns its address.
func (e *env) startServer(cfg sip.Config) string {
	e.tb.Helper()
	cfg.DB = e.d
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	_, addr, _ := startServer(e.tb, cfg, "127.0.0.1:0")
	return addr
}

func dialAt(t *testing.T, addr string) *sip.Client {
	t.Helper()
	c, err := sip.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func lockouts(t *testing.T, d *db.DB) []sip.Lockout {
	t.Helper()
	var ls []sip.Lockout
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		ls, err = sip.ListLockouts(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// TestLockoutsPersist: a lockout is in the database, so a restarted server keeps
// it; it ends when its time is up, or when staff lift it.
func TestLockoutsPersist(t *testing.T) {
	e := newEnv(t)
	var now atomic.Int64
	now.Store(dbtest.Monday.UnixNano())
	e.d.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() }

	for i := range 5 {
		if resp := send(t, e.dial(), sip.LoginMessage("kiosk", "wrong", "")); resp != "940" {
			t.Fatalf("failure %d: %q", i+1, resp)
		}
	}
	ls := lockouts(t, e.d)
	if len(ls) != 1 || ls[0].Kind != "login" || ls[0].Subject != "kiosk" || ls[0].Address != "127.0.0.1" || !ls[0].Locked(dbtest.Monday) {
		t.Fatalf("lockouts after five failures: %+v", ls)
	}

	// A restart: the new server refuses the right password.
	restarted := e.startServer(sip.Config{})
	if err := dialAt(t, restarted).Login("kiosk", "kiosk", ""); !errors.Is(err, sip.ErrLoginRefused) {
		t.Fatalf("after a restart, the right password: %v, want refused", err)
	}
	// Another account is not locked.
	if resp := send(t, dialAt(t, restarted), sip.LoginMessage("nobody", "x", "")); resp != "940" {
		t.Fatalf("another account: %q", resp)
	}

	// Sixteen minutes later the lockout is over.
	now.Store(dbtest.Monday.Add(16 * time.Minute).UnixNano())
	if err := dialAt(t, restarted).Login("kiosk", "kiosk", ""); err != nil {
		t.Fatalf("after the lockout: %v", err)
	}
	for _, l := range lockouts(t, e.d) {
		if l.Subject == "kiosk" {
			t.Errorf("a success leaves the row %+v", l)
		}
	}

	// Locked again, then lifted by staff (audited).
	for range 5 {
		send(t, e.dial(), sip.LoginMessage("kiosk", "wrong", ""))
	}
	ls = lockouts(t, e.d)
	if len(ls) == 0 || !ls[0].Locked(e.d.Now()) {
		t.Fatalf("not locked again: %+v", ls)
	}
	err := e.d.Write(context.Background(), func(tx *db.Tx) error {
		return sip.ClearLockout(tx, stacks.Actor{Name: "admin"}, ls[0].Key)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := dialAt(t, restarted).Login("kiosk", "kiosk", ""); err != nil {
		t.Fatalf("after staff lifted the lockout: %v", err)
	}
	if got := e.queryString(`SELECT detail FROM audit_log WHERE action = 'sip.lockout.clear'`); got != ls[0].Key {
		t.Errorf("audit of the lift: %q", got)
	}
}

// TestPINLockoutPersists: ten wrong PINs lock the patron's PIN on every terminal,
// of this server and of one started after it.
func TestPINLockoutPersists(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	msg := func(pin string) string { return "23001" + sipNow + "AOCEN|AAP0001|AC|AD" + pin + "|" }
	for range 10 {
		send(t, c, msg("0000"))
	}
	restarted := dialAt(t, e.startServer(sip.Config{}))
	if err := restarted.Login("kiosk", "kiosk", "CEN"); err != nil {
		t.Fatal(err)
	}
	if resp := send(t, restarted, msg("1234")); !strings.Contains(resp, "Too many wrong PINs") {
		t.Errorf("the right PIN on a restarted server: %s", resp)
	}
	ls := lockouts(t, e.d)
	if len(ls) != 1 || ls[0].Kind != "pin" || ls[0].Address != "" {
		t.Errorf("lockouts: %+v", ls)
	}
}

// TestPINComparedOncePerSession: a patron's PIN is compared with its hash once
// on a connection while it and the hash are unchanged; end patron session (35)
// forgets it, and a changed PIN is compared again.
func TestPINComparedOncePerSession(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	status := func(pin string) string {
		return send(t, c, "23001"+sipNow+"AOCEN|AAP0001|AC|AD"+pin+"|")
	}
	compared := func(want int64, what string, f func()) {
		t.Helper()
		base := passwords.Comparisons()
		f()
		if got := passwords.Comparisons() - base; got != want {
			t.Errorf("%s: %d comparisons, want %d", what, got, want)
		}
	}
	compared(1, "first message with the PIN", func() { status("1234") })
	compared(0, "three more", func() {
		for range 3 {
			if r := status("1234"); !strings.Contains(r, "|CQY|") {
				t.Fatalf("%s", r)
			}
		}
	})
	compared(1, "a different (wrong) PIN", func() { status("9999") })
	compared(0, "the right one again", func() { status("1234") })
	compared(1, "after end patron session", func() {
		send(t, c, "35"+sipNow+"AOCEN|AAP0001|")
		status("1234")
	})
	e.rehash(`UPDATE patrons SET pin_hash = ? WHERE card = 'P0001'`, "4321")
	compared(1, "after the PIN changed", func() {
		if r := status("1234"); !strings.Contains(r, "|CQN|") {
			t.Errorf("the old PIN after a change: %s", r)
		}
	})
}

// TestSettingsReachTerminal: a change an administrator makes to an account reaches
// a terminal logged in with it (once PrefsMaxAge has passed), without a new
// login; a deactivated account's connections close.
func TestSettingsReachTerminal(t *testing.T) {
	e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{PrefsMaxAge: 20 * time.Millisecond}})
	c := e.client()
	bx := func() string {
		resp := send(t, c, "9900302.00")
		_, after, _ := strings.Cut(resp, "|BX")
		v, _, _ := strings.Cut(after, "|")
		return v
	}
	if got := bx(); got != "YYYYYYYYYYYYYYYY" {
		t.Fatalf("BX before: %s", got)
	}
	language := func() string { return send(t, c, "23001"+sipNow+"AOCEN|AAP0001|AC|")[16:19] }
	if got := language(); got != sip.LanguageUnknown {
		t.Fatalf("language before: %s", got)
	}
	e.settings(func(u *sip.AccountUpdate) { u.Settings.Denied, u.Settings.Language = []string{"11"}, "003" })
	waittest.For(t, "the denied checkout to reach the terminal", func() bool { return bx() == "YNYYYYYYYYYYYYYY" })
	if got := language(); got != "003" {
		t.Errorf("language after it was set to 003: %s", got)
	}
	if resp := send(t, c, checkoutMsg("P0001", "I00001")); !strings.HasPrefix(resp, "120") {
		t.Errorf("a denied checkout: %s", resp)
	}
	var lastSeen, addr string
	err := e.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT last_seen_at, last_seen_addr FROM sip_accounts WHERE username = 'kiosk'`).Scan(&lastSeen, &addr)
	})
	if err != nil || lastSeen != db.FormatTime(dbtest.Monday) || addr != "127.0.0.1" {
		t.Errorf("last seen: %q from %q (%v)", lastSeen, addr, err)
	}

	err = e.d.Write(context.Background(), func(tx *db.Tx) error {
		var id int64
		if err := tx.QueryRow(`SELECT id FROM sip_accounts WHERE username = 'kiosk'`).Scan(&id); err != nil {
			return err
		}
		return sip.SetAccountActive(tx, stacks.System, id, false)
	})
	if err != nil {
		t.Fatal(err)
	}
	waittest.For(t, "the deactivated account's terminal to be cut off", func() bool {
		_, err := c.Send("9900302.00")
		return err != nil
	})
	if err := e.dial().Login("kiosk", "kiosk", ""); !errors.Is(err, sip.ErrLoginRefused) {
		t.Errorf("login with a deactivated account: %v", err)
	}
}

// TestUpdateAccountRefusesBadSettings: what the administration page may be sent.
func TestUpdateAccountRefusesBadSettings(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		name  string
		u     func(*sip.AccountUpdate)
		field string
	}{
		{"hold items", func(u *sip.AccountUpdate) { u.Settings.HoldItems = "isbn" }, "hold_items"},
		{"login denied", func(u *sip.AccountUpdate) { u.Settings.Denied = []string{"93"} }, "denied"},
		{"sort bins", func(u *sip.AccountUpdate) { u.SortBins, u.UseServerBins = "shelf", false }, "sort_bins"},
		{"branch", func(u *sip.AccountUpdate) { u.BranchCode = "NOPE" }, "branch"},
		{"institution", func(u *sip.AccountUpdate) { u.Institution = "a|b" }, "institution"},
		{"same item", func(u *sip.AccountUpdate) { u.Settings.SameItemCheckout = "refuse" }, "same_item"},
		{"language past 027", func(u *sip.AccountUpdate) { u.Settings.Language = "028" }, "language"},
		{"language not three digits", func(u *sip.AccountUpdate) { u.Settings.Language = "1" }, "language"},
		{"language a name", func(u *sip.AccountUpdate) { u.Settings.Language = "eng" }, "language"},
	} {
		err := e.d.Write(context.Background(), func(tx *db.Tx) error {
			u := sip.AccountUpdate{Institution: "CEN", BranchCode: "CEN", UseServerBins: true}
			tt.u(&u)
			var id int64
			if err := tx.QueryRow(`SELECT id FROM sip_accounts WHERE username = 'kiosk'`).Scan(&id); err != nil {
				return err
			}
			return sip.UpdateAccount(tx, stacks.System, id, u)
		})
		if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != tt.field {
			t.Errorf("%s: %v (field %q), want invalid %s", tt.name, err, stacks.ErrorField(err), tt.field)
		}
	}
}

// TestPINDoesNotDelayOtherTerminals: a PIN being compared (bcrypt, slow on
// purpose) holds up only its own terminal: another terminal checks an item out and
// in meanwhile, and gets its answers while the comparison still runs. The cost
// starts at 9 and goes up (to 12) only if a comparison ended before the other
// terminal's two answers, which proves nothing either way.
func TestPINDoesNotDelayOtherTerminals(t *testing.T) {
	for cost := 9; cost <= 12; cost++ {
		if pinOverlapped(t, cost) {
			return
		}
		t.Logf("at cost %d the comparison ended first; trying a slower hash", cost)
	}
	t.Fatal("even at cost 12 the PIN comparison ended before another terminal's checkout and checkin")
}

// pinOverlapped runs the test once with a PIN hash of cost; false when the
// comparison ended before the other terminal was answered.
func pinOverlapped(t *testing.T, cost int) bool {
	e := newEnv(t)
	h, err := bcryptHash("1234", cost)
	if err != nil {
		t.Fatal(err)
	}
	err = e.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE patrons SET pin_hash = ? WHERE card = 'P0001'`, h)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slow, other := e.client(), e.client()
	base := passwords.Comparisons()
	answered := make(chan string, 1)
	go func() {
		resp, _ := slow.Send("23001" + sipNow + "AOCEN|AAP0001|AC|AD1234|")
		answered <- resp
	}()
	comparedSince(t, base)
	overlapped := true
	for _, msg := range []string{checkoutMsg("P0003", "I00002"), checkinMsg("I00002")} {
		if resp := send(t, other, msg); resp[2] != '1' {
			t.Fatalf("%s: %s", msg, resp)
		}
		select {
		case <-answered:
			overlapped = false
		default:
		}
	}
	if !overlapped {
		return false
	}
	if resp := <-answered; !strings.Contains(resp, "|CQY|") {
		t.Errorf("the slow PIN: %s", resp)
	}
	return true
}

func bcryptHash(secret string, cost int) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(secret), cost)
	return string(h), err
}

// TestLockoutWindow: failures older than the window are forgotten: four, then
// sixteen minutes, then four more do not lock.
func TestLockoutWindow(t *testing.T) {
	e := newEnv(t)
	var now atomic.Int64
	now.Store(dbtest.Monday.UnixNano())
	e.d.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() }
	for round := range 2 {
		for i := range 4 {
			if resp := send(t, e.dial(), sip.LoginMessage("kiosk", "wrong", "")); resp != "940" {
				t.Fatalf("round %d failure %d: %q", round, i+1, resp)
			}
		}
		now.Add(int64(16 * time.Minute))
	}
	if err := e.dial().Login("kiosk", "kiosk", ""); err != nil {
		t.Errorf("eight failures in two windows locked the account: %v", err)
	}
}

// TestRememberedPINLocked: a PIN remembered on a connection is refused once the
// patron's PIN is locked by wrong PINs at another terminal, and served again once
// staff lift the lockout.
func TestRememberedPINLocked(t *testing.T) {
	e := newEnv(t)
	a, b := e.client(), e.client()
	msg := func(pin string) string { return "23001" + sipNow + "AOCEN|AAP0001|AC|AD" + pin + "|" }
	if resp := send(t, a, msg("1234")); !strings.Contains(resp, "|CQY|") {
		t.Fatalf("the right PIN: %s", resp)
	}
	for range 10 {
		send(t, b, msg("0000"))
	}
	if resp := send(t, a, msg("1234")); !strings.Contains(resp, "Too many wrong PINs") {
		t.Errorf("the remembered PIN after the lockout: %s", resp)
	}
	ls := lockouts(t, e.d)
	if len(ls) != 1 || ls[0].Kind != "pin" {
		t.Fatalf("lockouts: %+v", ls)
	}
	err := e.d.Write(context.Background(), func(tx *db.Tx) error { return sip.ClearLockout(tx, stacks.System, ls[0].Key) })
	if err != nil {
		t.Fatal(err)
	}
	if resp := send(t, a, msg("1234")); !strings.Contains(resp, "|CQY|") {
		t.Errorf("after staff lifted the PIN lockout: %s", resp)
	}
}

// TestDeniedChangesNothing: a denied block patron (01) blocks nobody.
func TestDeniedChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.settings(func(u *sip.AccountUpdate) { u.Settings.Denied = []string{"01"} })
	c := e.client()
	resp := send(t, c, "01Y"+sipNow+"AOCEN|ALCard retained|AAP0001|AC|")
	if !strings.HasPrefix(resp, "24YYYY") || !strings.Contains(resp, "|AFThis cannot be done at this machine") {
		t.Errorf("denied 01: %s", resp)
	}
	if got := e.queryString(`SELECT blocked FROM patrons WHERE card = 'P0001'`); got != "0" {
		t.Errorf("after a denied block patron, blocked = %s", got)
	}
}

// TestHoldItemsTitleFallback: with hold items as barcodes, a title-level hold on a
// title with no copy in circulation is listed by its title.
func TestHoldItemsTitleFallback(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	if resp := send(t, c, "15+"+sipNow+"BSCEN|BY2|AOCEN|AAP0003|ABI00010|AC|"); resp[2] != '1' {
		t.Fatalf("hold: %s", resp)
	}
	err := e.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE items SET status = 'missing' WHERE record_id = (SELECT record_id FROM items WHERE barcode = 'I00010')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	resp := send(t, c, "63001"+sipNow+"     Y    AOCEN|AAP0003|AC|")
	if !strings.Contains(resp, "|CDThe Left Hand of Darkness|") {
		t.Errorf("CD without a copy in circulation: %s", resp)
	}
}

// TestUpgradeKeepsBehaviour: accounts that exist when migration 0009 runs keep
// answering as before (ok 1 for an item not on loan, contact details without a
// PIN); accounts created afterwards get the new defaults.
func TestUpgradeKeepsBehaviour(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(t.TempDir()+"/old.db", db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ms, err := db.MigrationsFor(db.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
			return err
		}
		for _, m := range ms {
			if m.Version >= 9 {
				break
			}
			if _, err := tx.Exec(m.SQL); err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
			if _, err := tx.Exec(`INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00Z')`, m.Version, m.Name); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('CEN', 'Central')`); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO sip_accounts (username, password_hash, institution, branch_id, created_at)
			VALUES ('oldsorter', 'x', 'CEN', (SELECT id FROM branches WHERE code = 'CEN'), '2026-01-01T00:00:00Z')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		_, err := sip.CreateAccount(tx, stacks.System, sip.NewAccount{Username: "newkiosk", Password: "secret", Institution: "CEN", BranchCode: "CEN"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var accts []sip.Account
	err = d.Read(ctx, func(tx *db.Tx) error {
		var err error
		accts, err = sip.ListAccounts(tx)
		return err
	})
	if err != nil || len(accts) != 2 {
		t.Fatalf("%v, %+v", err, accts)
	}
	for _, a := range accts {
		want := a.Username == "oldsorter"
		if a.Settings.CheckedInOK != want || a.Settings.ContactWithoutPIN != want || a.Settings.HoldItems != sip.HoldItemsBarcode ||
			a.Settings.SameItemCheckout != sip.SameItemAnswer || a.Settings.Language != sip.LanguageUnknown {
			t.Errorf("%s after the upgrade: %+v", a.Username, a.Settings)
		}
	}
}
