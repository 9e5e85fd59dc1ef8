package web_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

// signedIn reports whether client c is signed in: the home page, not the login.
func (e *testEnv) signedIn(t *testing.T, c *http.Client) bool {
	t.Helper()
	r := e.get(t, c, "/")
	switch {
	case r.Status == http.StatusOK:
		return true
	case r.Status == http.StatusSeeOther && strings.HasPrefix(r.Location, "/login"):
		return false
	}
	t.Fatalf("GET /: %d to %q", r.Status, r.Location)
	return false
}

// sessionToken is the session cookie client c holds.
func (e *testEnv) sessionToken(t *testing.T, c *http.Client) string {
	t.Helper()
	u, _ := url.Parse(e.Srv.URL)
	tok := cookieValue(c, u)
	if tok == "" {
		t.Fatal("no session cookie")
	}
	return tok
}

// withToken is a client that sends token as its session cookie and keeps no jar.
func (e *testEnv) withToken(token string) *http.Client {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	c.Transport = roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		req.AddCookie(&http.Cookie{Name: "stacks_session", Value: token})
		return http.DefaultTransport.RoundTrip(req)
	})
	return c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (e *testEnv) staffID(t *testing.T, username string) string {
	t.Helper()
	return fmt.Sprint(e.count(t, `SELECT id FROM staff_users WHERE username = ?`, username))
}

// TestPasswordChangeEndsSessions: a new password, set by its owner on My account
// or by an administrator, ends the account's other sessions at once; the owner
// who changed it stays signed in under a new token, and nobody else is touched.
func TestPasswordChangeEndsSessions(t *testing.T) {
	t.Run("OwnPassword", func(t *testing.T) {
		e := newEnv(t)
		me, other, thief, admin := e.client(t), e.client(t), e.client(t), e.client(t)
		for _, c := range []*http.Client{me, other, thief} {
			e.login(t, c, "desk", "desk")
		}
		e.login(t, admin, "admin", "admin")
		before := e.sessionToken(t, me)
		r := e.post(t, me, "/account/password", url.Values{"current": {"desk"}, "password": {"new-desk-1"}, "confirm": {"new-desk-1"}})
		if r.Status != http.StatusSeeOther || r.Location != "/account" {
			t.Fatalf("change: %d to %q", r.Status, r.Location)
		}
		if !e.signedIn(t, me) {
			t.Fatal("the person who changed the password was signed out")
		}
		if after := e.sessionToken(t, me); after == before {
			t.Error("the session token was not renewed")
		}
		if e.signedIn(t, e.withToken(before)) {
			t.Error("the session's old token still signs in")
		}
		for name, c := range map[string]*http.Client{"another desk": other, "a stolen session": thief} {
			if e.signedIn(t, c) {
				t.Errorf("%s signed in with the old password is still signed in", name)
			}
		}
		if !e.signedIn(t, admin) {
			t.Error("another account's session ended")
		}
		if n := e.count(t, `SELECT count(*) FROM sessions`); n != 2 {
			t.Errorf("%d sessions left, want 2 (the changer's and the administrator's)", n)
		}
	})

	t.Run("AdminReset", func(t *testing.T) {
		e := newEnv(t)
		desk1, desk2, admin := e.client(t), e.client(t), e.client(t)
		e.login(t, desk1, "desk", "desk")
		e.login(t, desk2, "desk", "desk")
		e.login(t, admin, "admin", "admin")
		adminToken := e.sessionToken(t, admin)
		r := e.post(t, admin, "/admin/staff/"+e.staffID(t, "desk")+"/password", url.Values{"password": {"new-desk-pass"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("reset: %d", r.Status)
		}
		if e.signedIn(t, desk1) || e.signedIn(t, desk2) {
			t.Error("a session of the account whose password was reset is still signed in")
		}
		if !e.signedIn(t, admin) || e.sessionToken(t, admin) != adminToken {
			t.Error("the administrator's own session changed")
		}
		if r := e.login(t, e.client(t), "desk", "new-desk-pass"); r.Status != http.StatusSeeOther {
			t.Errorf("the new password: %d", r.Status)
		}
	})

	t.Run("AdminResetsOwn", func(t *testing.T) {
		e := newEnv(t)
		here, elsewhere := e.client(t), e.client(t)
		e.login(t, here, "admin", "admin")
		e.login(t, elsewhere, "admin", "admin")
		before := e.sessionToken(t, here)
		r := e.post(t, here, "/admin/staff/"+e.staffID(t, "admin")+"/password", url.Values{"password": {"new-admin-pass"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("reset: %d", r.Status)
		}
		if !e.signedIn(t, here) || e.sessionToken(t, here) == before {
			t.Error("the administrator who reset their own password is not signed in under a new token")
		}
		if e.signedIn(t, elsewhere) {
			t.Error("the administrator's other session is still signed in")
		}
	})

	t.Run("RefusedChangeEndsNothing", func(t *testing.T) {
		e := newEnv(t)
		me, other := e.client(t), e.client(t)
		e.login(t, me, "desk", "desk")
		e.login(t, other, "desk", "desk")
		r := e.post(t, me, "/account/password", url.Values{"current": {"wrong"}, "password": {"new-desk-1"}, "confirm": {"new-desk-1"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("wrong current password: %d", r.Status)
		}
		if !e.signedIn(t, me) || !e.signedIn(t, other) {
			t.Error("a refused change ended a session")
		}
	})
}

// TestSessionTokensHashed: the sessions table holds the SHA-256 of each token, so
// a backup (or any copy of the database) holds nothing that signs anyone in, while
// the cookies go on working. Where the keys are read from is engine-specific: on
// SQLite the backup is a database file, opened here; on PostgreSQL (the
// counterpart) it is pg_dump's archive, so the keys are read from the database
// the dump was made of, through the test's own handle.
func TestSessionTokensHashed(t *testing.T) {
	e := newEnv(t)
	var live []string
	for _, user := range []string{"desk", "desk", "admin"} {
		c := e.client(t)
		if r := e.login(t, c, user, user); r.Status != http.StatusSeeOther {
			t.Fatalf("login %s: %d", user, r.Status)
		}
		live = append(live, e.sessionToken(t, c))
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := e.DB.Backup(context.Background(), backup); err != nil {
		t.Fatal(err)
	}
	keys := backupSessionKeys(t, e, backup)
	if len(keys) != len(live) {
		t.Fatalf("%d sessions in the backup, want %d", len(keys), len(live))
	}
	want := map[string]bool{}
	for _, tok := range live {
		sum := sha256.Sum256([]byte(tok))
		want[hex.EncodeToString(sum[:])] = true
	}
	for _, key := range keys {
		if e.signedIn(t, e.withToken(key)) {
			t.Errorf("a session key from the backup, %q, signs in on the live server", key)
		}
		if !want[key] {
			t.Errorf("session key %q is not the SHA-256 of a live token", key)
		}
	}
	for _, tok := range live {
		if !e.signedIn(t, e.withToken(tok)) {
			t.Error("a live session cookie no longer signs in")
		}
	}
	// Nothing else in the file is a token either.
	raw, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range live {
		if strings.Contains(string(raw), tok) {
			t.Error("a live session token is in the backup file")
		}
	}
}

// backupSessionKeys reads the session keys a backup holds: from the SQLite file
// itself, or on PostgreSQL from the database pg_dump copied (e.DB).
func backupSessionKeys(t *testing.T, e *testEnv, backup string) []string {
	t.Helper()
	read := func(q func(string, ...any) (*sql.Rows, error)) []string {
		rows, err := q(`SELECT token_hash FROM sessions`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var keys []string
		for rows.Next() {
			var key []byte
			if err := rows.Scan(&key); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, string(key))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	if dbtest.Engine() == db.Postgres {
		var keys []string
		if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			keys = read(tx.Query)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	copyDB, err := sql.Open("sqlite", backup)
	if err != nil {
		t.Fatal(err)
	}
	defer copyDB.Close()
	return read(copyDB.Query)
}

// TestAnonymousLogout: a logout from a browser that is not signed in (no cookie,
// a cookie of no session, or a made-up one) is sent to the login page and writes
// no session: thousands of them cost the database nothing.
func TestAnonymousLogout(t *testing.T) {
	e := newEnv(t)
	jar := e.client(t)
	e.get(t, jar, "/login")
	for i := 0; i < 20; i++ {
		for name, c := range map[string]*http.Client{"no cookie": e.client(t), "a jar": jar, "a made-up cookie": e.withToken("made-up-token")} {
			r := e.post(t, c, "/logout", nil)
			if r.Status != http.StatusSeeOther || r.Location != "/login" {
				t.Fatalf("anonymous logout (%s): %d to %q, want 303 to /login", name, r.Status, r.Location)
			}
			if sc := r.Header.Get("Set-Cookie"); sc != "" {
				t.Fatalf("anonymous logout (%s) set a cookie: %q", name, sc)
			}
		}
	}
	if n := e.count(t, `SELECT count(*) FROM sessions`); n != 0 {
		t.Fatalf("%d sessions written by anonymous logouts, want 0", n)
	}

	t.Run("SignedInLogoutEndsSession", func(t *testing.T) {
		c := e.client(t)
		e.login(t, c, "desk", "desk")
		r := e.post(t, c, "/logout", nil)
		if r.Status != http.StatusSeeOther || r.Location != "/login" {
			t.Fatalf("logout: %d to %q", r.Status, r.Location)
		}
		if e.signedIn(t, c) {
			t.Fatal("still signed in after logging out")
		}
		mustContain(t, "the login page", e.get(t, c, "/login").Body, "You have logged out.")
	})
}
