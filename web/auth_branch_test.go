package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/web"
)

// branchCookie is the cookie value that remembers this browser's branch, "" for
// none.
func (e *testEnv) branchCookie(c *http.Client) string {
	u, _ := url.Parse(e.Srv.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "stacks_branch" {
			return ck.Value
		}
	}
	return ""
}

// auditDetail is the detail of the newest audit row of the action by username.
func (e *testEnv) auditDetail(t *testing.T, action, username string) string {
	t.Helper()
	var detail string
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT detail FROM audit_log WHERE action = ? AND actor = ? ORDER BY id DESC LIMIT 1`, action, username).Scan(&detail)
	})
	if err != nil {
		t.Fatalf("audit %s by %s: %v", action, username, err)
	}
	return detail
}

// branchOf is the code of the branch a query's single id names.
func (e *testEnv) branchOf(t *testing.T, query string, args ...any) string {
	t.Helper()
	var code string
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT code FROM branches WHERE id = (`+query+`)`, args...).Scan(&code)
	})
	if err != nil {
		t.Fatalf("branch of %s: %v", query, err)
	}
	return code
}

// lendAndReturn checks out barcode to card and checks it in again at the
// client's desk.
func (e *testEnv) lendAndReturn(t *testing.T, c *http.Client, card, barcode string) {
	t.Helper()
	if r := e.post(t, c, "/checkout/patron", url.Values{"card": {card}}); r.Status != http.StatusSeeOther {
		t.Fatalf("card %s: %d\n%.500s", card, r.Status, r.Body)
	}
	if r := e.post(t, c, "/checkout", url.Values{"barcode": {barcode}}); r.Status != http.StatusSeeOther {
		t.Fatalf("check out %s: %d\n%.500s", barcode, r.Status, r.Body)
	}
	if r := e.post(t, c, "/checkin", url.Values{"barcode": {barcode}}); r.Status != http.StatusSeeOther {
		t.Fatalf("check in %s: %d\n%.500s", barcode, r.Status, r.Body)
	}
}

const loanBranch = `SELECT branch_id FROM loans WHERE item_id = (SELECT id FROM items WHERE barcode = ?) ORDER BY id DESC LIMIT 1`
const checkinBranch = `SELECT branch_id FROM checkins WHERE item_id = (SELECT id FROM items WHERE barcode = ?) ORDER BY id DESC LIMIT 1`

// TestBranchAtSignIn: staff choose at sign-in the branch they work at; the
// header shows it, the desk's checkouts and checkins happen there, the audited
// sign-in names it, and this browser offers it first at the next sign-in. A
// sign-in without a Branch field (a script's) works at the account's home
// branch.
func TestBranchAtSignIn(t *testing.T) {
	e := newDemoEnv(t)

	t.Run("Chosen", func(t *testing.T) {
		c := e.client(t)
		form := e.get(t, c, "/login").Body
		mustContain(t, "the login form", form, `<label for="branch">Branch</label>`, `<option value="" selected>My home branch</option>`,
			`<option value="EAS">Eastside (EAS)</option>`)
		r := e.post(t, c, "/login", url.Values{"username": {"desk"}, "password": {"desk"}, "branch": {"EAS"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("sign in at Eastside: %d\n%.500s", r.Status, r.Body)
		}
		mustContain(t, "the start page", e.get(t, c, "/").Body, "Desk at Eastside (EAS)", `href="/branch">Change branch</a>`, "You are working at Eastside")
		if got := e.auditDetail(t, "staff.login", "desk"); !strings.HasSuffix(got, " at Eastside (EAS)") {
			t.Errorf("the sign-in's audit says %q, want it at Eastside (EAS)", got)
		}
		e.lendAndReturn(t, c, "P0001", "I00001")
		if got := e.branchOf(t, loanBranch, "I00001"); got != "EAS" {
			t.Errorf("the loan was made at %s, want EAS", got)
		}
		if got := e.branchOf(t, checkinBranch, "I00001"); got != "EAS" {
			t.Errorf("the checkin was at %s, want EAS", got)
		}
		if got := e.branchCookie(c); got != "EAS" {
			t.Errorf("this browser remembers %q, want EAS", got)
		}
		// The next sign-in in this browser offers Eastside first.
		e.post(t, c, "/logout", nil)
		mustContain(t, "the login form again", e.get(t, c, "/login").Body, `<option value="EAS" selected>Eastside (EAS)</option>`)
		// Choosing "My home branch" forgets it.
		e.post(t, c, "/login", url.Values{"username": {"desk"}, "password": {"desk"}, "branch": {""}})
		mustContain(t, "the start page at home", e.get(t, c, "/").Body, "Desk at Central (CEN)")
		if got := e.branchCookie(c); got != "" {
			t.Errorf("after signing in at the home branch this browser remembers %q", got)
		}
	})

	t.Run("NoBranchField", func(t *testing.T) {
		c := e.client(t)
		if r := e.login(t, c, "desk", "desk"); r.Status != http.StatusSeeOther {
			t.Fatalf("sign in: %d", r.Status)
		}
		mustContain(t, "the start page", e.get(t, c, "/").Body, "Desk at Central (CEN)")
		e.lendAndReturn(t, c, "P0001", "I00002")
		if got := e.branchOf(t, loanBranch, "I00002"); got != "CEN" {
			t.Errorf("the loan was made at %s, want CEN (the home branch)", got)
		}
		if got := e.auditDetail(t, "staff.login", "desk"); !strings.HasSuffix(got, " at Central (CEN)") {
			t.Errorf("the sign-in's audit says %q, want it at Central (CEN)", got)
		}
	})

	t.Run("ErrUnknownBranch", func(t *testing.T) {
		c := e.client(t)
		r := e.post(t, c, "/login", url.Values{"username": {"desk"}, "password": {"desk"}, "branch": {"NOPE"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("sign in at branch NOPE: %d, want 422", r.Status)
		}
		mustContain(t, "the refusal", r.Body, `<p class="field-error" id="branch-error">There is no branch with code &#34;NOPE&#34;. Choose the branch you work at from the list.</p>`,
			`aria-invalid="true"`, `value="desk"`)
		if e.signedIn(t, c) {
			t.Error("signed in at a branch that does not exist")
		}
		if n := e.count(t, `SELECT count(*) FROM login_throttle WHERE key = 'user:desk' AND failures > 0`); n != 0 {
			t.Error("a sign-in refused for its branch counted as a failed password")
		}
	})
}

// TestChangeBranch: the Change branch page moves the desk to another branch
// for the rest of the session (kept in the database, so another server or a
// CGI process on the same database sees it), audited from and to; an unknown
// branch is refused beside the field.
func TestChangeBranch(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)

	form := e.get(t, c, "/branch")
	if form.Status != http.StatusOK {
		t.Fatalf("GET /branch: %d", form.Status)
	}
	mustContain(t, "the Change branch page", form.Body, "<h1>Change branch</h1>", `<label for="branch">Branch</label>`,
		`<option value="CEN" selected>Central (CEN)</option>`, `<button type="submit">Change branch</button>`)

	r := e.post(t, c, "/branch", url.Values{"branch": {"WES"}})
	if r.Status != http.StatusSeeOther || r.Location != "/" {
		t.Fatalf("change to Westside: %d %q\n%.500s", r.Status, r.Location, r.Body)
	}
	mustContain(t, "the start page", e.get(t, c, "/").Body, "Desk at Westside (WES)", "You are working at Westside now")
	if got := e.auditDetail(t, "staff.branch", "desk"); got != "from Central (CEN) to Westside (WES)" {
		t.Errorf("the change's audit says %q", got)
	}
	if got := e.branchCookie(c); got != "WES" {
		t.Errorf("this browser remembers %q, want WES", got)
	}
	e.lendAndReturn(t, c, "P0001", "I00003")
	if got := e.branchOf(t, loanBranch, "I00003"); got != "WES" {
		t.Errorf("the loan was made at %s, want WES", got)
	}
	mustContain(t, "the Change branch page at Westside", e.get(t, c, "/branch").Body,
		`<option value="WES" selected>Westside (WES)</option>`, "Your account's home branch is Central.")

	t.Run("OtherServer", func(t *testing.T) {
		other := httptest.NewServer(web.New(web.Config{DB: e.DB}))
		t.Cleanup(other.Close)
		req, _ := http.NewRequest(http.MethodGet, other.URL+"/", nil)
		mustContain(t, "another server's start page", do(t, c, req).Body, "Desk at Westside (WES)")
	})

	t.Run("ErrUnknownBranch", func(t *testing.T) {
		r := e.post(t, c, "/branch", url.Values{"branch": {"NOPE"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("change to NOPE: %d, want 422", r.Status)
		}
		mustContain(t, "the refusal", r.Body, `id="branch-error">There is no branch with code &#34;NOPE&#34;`, `aria-invalid="true"`)
		mustContain(t, "the start page", e.get(t, c, "/").Body, "Desk at Westside (WES)")
	})

	t.Run("Home", func(t *testing.T) {
		e.post(t, c, "/branch", url.Values{"branch": {"CEN"}})
		mustContain(t, "the start page", e.get(t, c, "/").Body, "Desk at Central (CEN)")
		if got := e.auditDetail(t, "staff.branch", "desk"); got != "from Westside (WES) to Central (CEN)" {
			t.Errorf("the change's audit says %q", got)
		}
	})
}
