package opac_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/opac"
	"github.com/stacks-ils/stacks/web"
)

type route struct{ method, pattern string }

func walk(t *testing.T, r chi.Router) []route {
	t.Helper()
	var out []route
	err := chi.Walk(r, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		out = append(out, route{method, pattern})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fill puts an id in a route's parameters and a name in its wildcard.
func fill(pattern, id string) string {
	p := strings.ReplaceAll(pattern, "{id}", id)
	p = strings.ReplaceAll(p, "/*", "/opac.css")
	for strings.Contains(p, "{") {
		i, j := strings.Index(p, "{"), strings.Index(p, "}")
		p = p[:i] + id + p[j+1:]
	}
	return p
}

// TestRoutesNeedSession walks every route of the patrons' site: each one not in
// opac.PublicRoutes sends a visitor to the sign-in page, GET or POST, and shows
// nothing; the public ones are listed by name, so a new route is private until
// someone decides otherwise.
func TestRoutesNeedSession(t *testing.T) {
	e := newEnv(t)
	routes := walk(t, e.OPAC.Router())
	if len(routes) < 20 {
		t.Fatalf("only %d routes walked", len(routes))
	}
	private := 0
	for _, rt := range routes {
		key := rt.method + " " + rt.pattern
		if opac.PublicRoutes[key] {
			continue
		}
		private++
		t.Run(strings.ReplaceAll(key, "/", "_"), func(t *testing.T) {
			req, _ := http.NewRequest(rt.method, e.Srv.URL+fill(rt.pattern, "1"), strings.NewReader(url.Values{"pickup": {"CEN"}, "loan": {"1"}, "all": {"1"}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			r := do(t, e.client(), req)
			if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/signin") {
				t.Errorf("%s without a session: %d to %q, want 303 to /signin", key, r.Status, r.Location)
			}
		})
	}
	if private < 10 {
		t.Errorf("only %d private routes: is the account mounted?", private)
	}
	// Every public route named in the list exists: the list is not stale.
	have := map[string]bool{}
	for _, rt := range routes {
		have[rt.method+" "+rt.pattern] = true
	}
	for key := range opac.PublicRoutes {
		if !have[key] {
			t.Errorf("opac.PublicRoutes names %q, which the router does not have", key)
		}
	}
}

// TestNoStaffRoutes walks the staff site's router and asks the patrons' site for
// each staff route, signed in as a patron: none is served. A staff path that the
// patrons' site also has (/search, /records/{id}) is the patrons' page, without
// the staff's navigation and without a staff cookie.
func TestNoStaffRoutes(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	e.signIn(t, c, "P0001")
	own := map[string]bool{}
	for _, rt := range walk(t, e.OPAC.Router()) {
		own[rt.method+" "+rt.pattern] = true
	}
	staff := walk(t, web.New(web.Config{DB: e.DB}).Router())
	if len(staff) < 40 {
		t.Fatalf("only %d staff routes walked", len(staff))
	}
	id := strconv.FormatInt(e.recordOf(t, "I00001"), 10)
	for _, rt := range staff {
		key := rt.method + " " + rt.pattern
		path := fill(rt.pattern, id)
		req, _ := http.NewRequest(rt.method, e.Srv.URL+path, strings.NewReader("card=P0002&barcode=I00001&pickup=CEN"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		r := do(t, c, req)
		for _, ck := range r.Header.Values("Set-Cookie") {
			if strings.HasPrefix(ck, "stacks_session=") {
				t.Errorf("%s set the staff session cookie", key)
			}
		}
		for _, marker := range []string{"Log out", "Check out", "Check in", "Transfers", "Administration", "Workstation"} {
			if strings.Contains(r.Body, ">"+marker+"<") {
				t.Errorf("%s on the patrons' site shows the staff's %q", key, marker)
			}
		}
		if own[key] {
			continue
		}
		if r.Status != http.StatusNotFound && r.Status != http.StatusMethodNotAllowed {
			t.Errorf("staff route %s (%s) answered %d on the patrons' site, want 404 or 405", key, path, r.Status)
		}
	}
}

// TestOtherPatronsIDs tries every id-bearing route of My account with another
// patron's loan and hold: each is refused with the same 404 as an id that does
// not exist, and the other patron's loan and hold are unchanged.
func TestOtherPatronsIDs(t *testing.T) {
	e := newEnv(t)
	theirLoan := e.checkout(t, "P0002", "I00004")
	rec := e.recordOf(t, "I00010")
	e.checkout(t, "P0001", "I00010")
	placed, err := e.Circ.PlaceHold(context.Background(), holds.PlaceRequest{Actor: e.Desk, RecordID: rec, PatronCard: "P0002", PickupBranchCode: "CEN"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.client()
	e.signIn(t, c, "P0003")
	hold := "/account/holds/" + strconv.FormatInt(placed.HoldID, 10)
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/account/renew", url.Values{"loan": {strconv.FormatInt(theirLoan.ID, 10)}}},
		{hold + "/cancel", nil},
		{hold + "/suspend", url.Values{"until": {"2026-12-20"}}},
		{hold + "/resume", nil},
		{hold + "/pickup", url.Values{"pickup": {"EAS"}}},
		{"/account/holds/99999999/cancel", nil},
		{hold + "/cancel", url.Values{"confirm": {"yes"}}},
	} {
		r := e.post(t, c, tc.path, tc.form)
		if r.Status != http.StatusNotFound {
			t.Errorf("%s with another patron's id: %d, want 404\n%s", tc.path, r.Status, text(r.Body))
		}
		if strings.Contains(r.Body, "Blake") || strings.Contains(r.Body, "Owing") || strings.Contains(r.Body, "P0002") {
			t.Errorf("%s shows the other patron's name or card", tc.path)
		}
	}
	// The question before cancelling is not shown for another patron's hold.
	if r := e.get(t, c, hold+"/cancel"); r.Status != http.StatusNotFound || strings.Contains(r.Body, "Left Hand") {
		t.Errorf("GET %s/cancel with another patron's hold: %d\n%s", hold, r.Status, text(r.Body))
	}
	var h holds.Hold
	var renewals int
	err = e.DB.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		if h, err = holds.FindHold(tx, placed.HoldID); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT renewals FROM loans WHERE id = ?`, theirLoan.ID).Scan(&renewals)
	})
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != holds.StatusQueued || h.SuspendedUntil != "" || h.PickupBranchName != "Central" || renewals != 0 {
		t.Errorf("the other patron's hold or loan changed: %+v, renewals %d", h, renewals)
	}
	// My account and the fines page show only the signed-in patron's.
	for _, p := range []string{"/account", "/account/fines"} {
		if body := e.get(t, c, p).Body; strings.Contains(body, "Blake") || strings.Contains(body, "The Left Hand") {
			t.Errorf("%s shows another patron's data", p)
		}
	}
}

// TestCrossSitePost: a form posted from another site is refused, signed in or
// not (CSRF).
func TestCrossSitePost(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	e.signIn(t, c, "P0001")
	for _, path := range []string{"/account/renew", "/account/pin", "/signout", "/signin"} {
		req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+path, strings.NewReader("all=1"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		if r := do(t, c, req); r.Status != http.StatusForbidden {
			t.Errorf("cross-site POST %s: %d, want 403", path, r.Status)
		}
	}
}

// TestCrossSiteHoldCancel: the answer to "Cancel your hold?" posted from another
// site is refused, and the hold stays.
func TestCrossSiteHoldCancel(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	e.signIn(t, c, "P0001")
	e.checkout(t, "P0002", "I00010")
	placed, err := e.Circ.PlaceHold(context.Background(), holds.PlaceRequest{Actor: e.Desk, RecordID: e.recordOf(t, "I00010"), PatronCard: "P0001", PickupBranchCode: "CEN"})
	if err != nil {
		t.Fatal(err)
	}
	path := "/account/holds/" + strconv.FormatInt(placed.HoldID, 10)
	req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+path+"/cancel", strings.NewReader("confirm=yes"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if r := do(t, c, req); r.Status != http.StatusForbidden {
		t.Errorf("cross-site POST %s/cancel: %d, want 403", path, r.Status)
	}
	if status := e.holdStatus(t, path); status != holds.StatusQueued {
		t.Errorf("the hold is %s after a cross-site post, want queued", status)
	}
}
