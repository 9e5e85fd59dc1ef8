package sip_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/sip"
)

// TestMigrateLockoutsIntoThrottle: a login and a PIN locked in sip_lockouts in
// its old shape (no failures left, the window started when the lockout did)
// stay locked through migration 0035, on either engine: the login is refused,
// the PIN is told locked, and the SIP accounts page lists both as locked.
func TestMigrateLockoutsIntoThrottle(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	c := e.client() // logged in before the upgrade
	now := e.d.Now()
	var patronID int64
	if err := e.d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT id FROM patrons WHERE card = 'P0001'`).Scan(&patronID)
	}); err != nil {
		t.Fatal(err)
	}
	// sip_lockouts as migration 0034 left it, with a lockout of each kind.
	e.exec(`CREATE TABLE sip_lockouts (key TEXT PRIMARY KEY, kind TEXT NOT NULL, subject TEXT NOT NULL,
		address TEXT NOT NULL DEFAULT '', failures INTEGER NOT NULL, window_start TEXT NOT NULL, locked_until TEXT)`)
	at, until := db.FormatTime(now.Add(-time.Minute)), db.FormatTime(now.Add(14*time.Minute))
	e.exec(`INSERT INTO sip_lockouts (key, kind, subject, address, failures, window_start, locked_until)
		VALUES ('login:kiosk|127.0.0.1', 'login', 'kiosk', '127.0.0.1', 0, ?1, ?2), (?3, 'pin', ?4, '', 0, ?1, ?2)`,
		at, until, passwords.PINKey(patronID), passwords.PINKey(patronID)[len("pin:"):])
	ms, err := db.MigrationsFor(e.d.Engine())
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	for _, m := range ms {
		if m.Version != 35 {
			continue
		}
		for _, q := range strings.Split(m.SQL, ";") {
			if strings.TrimSpace(stripComments(q)) != "" {
				e.exec(q)
			}
		}
		ran = true
	}
	if !ran {
		t.Fatal("no migration 0035")
	}

	if r := send(t, c, "23001"+sipNow+"AOCEN|AAP0001|AC|AD1234|"); strings.Contains(r, "|CQY|") {
		t.Errorf("the PIN locked before the upgrade is accepted after it: %s", r)
	}
	if err := e.dial().Login("kiosk", "kiosk", "CEN"); err == nil {
		t.Error("the login locked before the upgrade is accepted after it")
	}
	var ls []sip.Lockout
	if err := e.d.Read(ctx, func(tx *db.Tx) (err error) {
		ls, err = sip.ListLockouts(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	locked := map[string]bool{}
	for _, l := range ls {
		locked[l.Kind+" "+l.Subject+" "+l.Address] = l.Locked(now)
	}
	if !locked["login kiosk 127.0.0.1"] || !locked["pin "+passwords.PINKey(patronID)[len("pin:"):]+" "] {
		t.Errorf("listed after the upgrade: %+v, want the login and the PIN locked", ls)
	}
}

// stripComments drops the SQL comment lines of q.
func stripComments(q string) string {
	var out []string
	for _, line := range strings.Split(q, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
