package web_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// sqlStatements reads the statements a response's request ran, from its
// Server-Timing header.
func sqlStatements(t *testing.T, r response) int {
	t.Helper()
	_, after, ok := strings.Cut(r.Header.Get("Server-Timing"), `sql;desc="`)
	n, err := strconv.Atoi(strings.SplitN(after, `"`, 2)[0])
	if !ok || err != nil {
		t.Fatalf("no statement count in Server-Timing %q", r.Header.Get("Server-Timing"))
	}
	return n
}

// TestStaffAccountChangeReachesServer: the staff site keeps the signed-in
// account in memory between requests (one statement fewer a request: the
// session lookup reads the accounts' version with the session), and a change
// made past this server (here SQL on the database, as another server, a CGI
// process or an administrator would) reaches its next request: a new branch
// name, a new display name, an account made inactive.
func TestStaffAccountChangeReachesServer(t *testing.T) {
	e := newEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	e.get(t, c, "/")
	warm := e.get(t, c, "/")
	if warm.Status != http.StatusOK || !strings.Contains(warm.Body, "Morgan Desk") {
		t.Fatalf("GET /: %d", warm.Status)
	}
	sqlExec := func(q string, args ...any) {
		t.Helper()
		if err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
			_, err := tx.Exec(q, args...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}

	sqlExec(`UPDATE branches SET name = 'Central Library' WHERE code = 'CEN'`)
	r := e.get(t, c, "/")
	if !strings.Contains(r.Body, "Central Library") {
		t.Errorf("the branch's new name is not on the next page")
	}
	if got, want := sqlStatements(t, r), sqlStatements(t, warm)+2; got != want {
		t.Errorf("after the change the page ran %d statements, want %d (the warm page's %d, and the account read again with its version)",
			got, want, sqlStatements(t, warm))
	}
	if again := e.get(t, c, "/"); sqlStatements(t, again) != sqlStatements(t, warm) {
		t.Errorf("the page ran %d statements, then %d: the account is not kept", sqlStatements(t, warm), sqlStatements(t, again))
	}

	sqlExec(`UPDATE staff_users SET display_name = 'Morgan Changed' WHERE username = 'desk'`)
	if r := e.get(t, c, "/"); !strings.Contains(r.Body, "Morgan Changed") {
		t.Errorf("the account's new display name is not on the next page")
	}

	sqlExec(`UPDATE staff_users SET active = ? WHERE username = 'desk'`, false)
	r = e.get(t, c, "/")
	if r.Status != http.StatusSeeOther || !strings.Contains(r.Location, "/login") {
		t.Fatalf("an account made inactive elsewhere still gets pages: %d to %q", r.Status, r.Location)
	}
}
