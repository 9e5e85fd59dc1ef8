package web_test

import (
	"net/http"
	"net/url"
	"testing"
)

// TestAccountPassword: staff change their own password, knowing the current one;
// each refusal is shown beside its field and changes nothing.
func TestAccountPassword(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	r := e.get(t, c, "/account")
	mustContain(t, "the account page", r.Body, "<h1>My account</h1>", `<label for="current">Current password</label>`, `href="/account"`)
	for _, tc := range []struct {
		field string
		form  url.Values
	}{
		{"confirm", url.Values{"current": {"desk"}, "password": {"new-desk-1"}, "confirm": {"new-desk-2"}}},
		{"password", url.Values{"current": {"desk"}, "password": {"ab"}, "confirm": {"ab"}}},
		{"current", url.Values{"current": {"not-it"}, "password": {"new-desk-1"}, "confirm": {"new-desk-1"}}},
	} {
		r := e.post(t, c, "/account/password", tc.form)
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, tc.field) == "" {
			t.Errorf("%v: %d, want 422 with a message beside %s", tc.form, r.Status, tc.field)
		}
	}
	if r := e.login(t, e.client(t), "desk", "desk"); r.Status != http.StatusSeeOther {
		t.Fatalf("a refused change changed the password: sign-in %d", r.Status)
	}
	r = e.post(t, c, "/account/password", url.Values{"current": {"desk"}, "password": {"new-desk-1"}, "confirm": {"new-desk-1"}})
	if r.Status != http.StatusSeeOther || r.Location != "/account" {
		t.Fatalf("change: %d to %q", r.Status, r.Location)
	}
	mustContain(t, "after the change", e.get(t, c, "/account").Body, "Your password is changed.")
	if r := e.login(t, e.client(t), "desk", "desk"); r.Status == http.StatusSeeOther {
		t.Error("the old password still signs in")
	}
	if r := e.login(t, e.client(t), "desk", "new-desk-1"); r.Status != http.StatusSeeOther {
		t.Errorf("the new password: %d", r.Status)
	}
	if r := e.post(t, e.client(t), "/account/password", url.Values{"current": {"x"}, "password": {"yyyy"}, "confirm": {"yyyy"}}); r.Status != http.StatusSeeOther || r.Location == "/account" {
		t.Errorf("signed out: %d to %q, want the login page", r.Status, r.Location)
	}
}
