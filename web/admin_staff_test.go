package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestAdminStaff(t *testing.T) {
	e := newAdminEnv(t)
	r := e.get(t, e.Admin, "/admin/staff")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /admin/staff: %d", r.Status)
	}
	mustContain(t, "the staff page", r.Body, "<h1>Staff accounts</h1>", "<td>desk</td>", "<td>admin</td>", "Deactivate desk", "(you)")
	if strings.Contains(r.Body, "Deactivate admin") {
		t.Error("the page offers administrators to deactivate themselves")
	}
	adminCheckLabels(t, "/admin/staff", r.Body)
	deskID := strconv.Itoa(e.count(t, `SELECT id FROM staff_users WHERE username = 'desk'`))

	// Adding: refused fields come back beside the field, with what was typed.
	add := url.Values{"username": {"jo"}, "display_name": {"Jo Librarian"}, "password": {"pass-jo"}, "role": {"circulation"}, "branch": {"EAS"}}
	for field, bad := range map[string]string{"username": "", "display_name": " ", "password": "abc", "branch": "NOPE", "role": "owner"} {
		form := url.Values{}
		for k, v := range add {
			form[k] = v
		}
		form.Set(field, bad)
		r := e.post(t, e.Admin, "/admin/staff", form)
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, field) == "" {
			t.Errorf("add with %s=%q: %d, want 422 with a message beside %s", field, bad, r.Status, field)
		}
		if field != "display_name" && !strings.Contains(r.Body, `value="Jo Librarian"`) {
			t.Errorf("add with %s=%q: the typed name is lost", field, bad)
		}
	}
	if r := e.post(t, e.Admin, "/admin/staff", adminWith(add, "username", "desk")); r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "username"), "taken") {
		t.Errorf("a taken username: %d, %q", r.Status, fieldError(r.Body, "username"))
	}
	if r := e.post(t, e.Admin, "/admin/staff", add); r.Status != http.StatusSeeOther {
		t.Fatalf("add jo: %d", r.Status)
	}
	mustContain(t, "after adding", e.get(t, e.Admin, "/admin/staff").Body, "Account jo created for Jo Librarian at East.")
	jo := e.client(t)
	if r := e.login(t, jo, "jo", "pass-jo"); r.Status != http.StatusSeeOther {
		t.Fatalf("the new account signs in: %d", r.Status)
	}

	// A new password: too short is refused beside that account's field.
	r = e.post(t, e.Admin, "/admin/staff/"+deskID+"/password", url.Values{"password": {"ab"}})
	if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "password_"+deskID) == "" {
		t.Errorf("a short password: %d", r.Status)
	}
	if r := e.post(t, e.Admin, "/admin/staff/"+deskID+"/password", url.Values{"password": {"new-desk-pass"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("set desk's password: %d", r.Status)
	}
	if r := e.login(t, e.client(t), "desk", "desk"); r.Status == http.StatusSeeOther {
		t.Error("the old password still signs in")
	}
	desk := e.client(t)
	if r := e.login(t, desk, "desk", "new-desk-pass"); r.Status != http.StatusSeeOther {
		t.Fatalf("the new password: %d", r.Status)
	}

	// Deactivating ends desk's session at its next page and refuses sign-in.
	if r := e.post(t, e.Admin, "/admin/staff/"+deskID+"/active", url.Values{"active": {"0"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("deactivate desk: %d", r.Status)
	}
	if r := e.get(t, desk, "/checkout"); r.Status == http.StatusOK {
		t.Error("a deactivated account's session still works")
	}
	if r := e.login(t, e.client(t), "desk", "new-desk-pass"); r.Status == http.StatusSeeOther {
		t.Error("a deactivated account signs in")
	}
	mustContain(t, "the page after deactivating", e.get(t, e.Admin, "/admin/staff").Body, "<strong>Deactivated</strong>", "Reactivate desk")
	if r := e.post(t, e.Admin, "/admin/staff/"+deskID+"/active", url.Values{"active": {"1"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("reactivate desk: %d", r.Status)
	}
	if r := e.login(t, e.client(t), "desk", "new-desk-pass"); r.Status != http.StatusSeeOther {
		t.Error("a reactivated account cannot sign in")
	}

	// Nobody deactivates their own account.
	adminID := strconv.Itoa(e.count(t, `SELECT id FROM staff_users WHERE username = 'admin'`))
	if r := e.post(t, e.Admin, "/admin/staff/"+adminID+"/active", url.Values{"active": {"0"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("deactivate self: %d", r.Status)
	}
	mustContain(t, "after trying to deactivate oneself", e.get(t, e.Admin, "/admin/staff").Body, "You cannot deactivate your own account")
	if e.count(t, `SELECT active FROM staff_users WHERE username = 'admin'`) != 1 {
		t.Error("the administrator deactivated their own account")
	}
	if r := e.post(t, e.Admin, "/admin/staff/999999/active", url.Values{"active": {"0"}}); r.Status != http.StatusNotFound {
		t.Errorf("no such account: %d, want 404", r.Status)
	}

	// Circulation staff may do none of it.
	if r := e.login(t, desk, "desk", "new-desk-pass"); r.Status != http.StatusSeeOther {
		t.Fatal(r.Status)
	}
	for path, form := range map[string]url.Values{
		"/admin/staff":                          adminWith(add, "username", "mallory"),
		"/admin/staff/" + adminID + "/active":   {"active": {"0"}},
		"/admin/staff/" + adminID + "/password": {"password": {"owned-now"}},
	} {
		if r := e.post(t, desk, path, form); r.Status != http.StatusForbidden {
			t.Errorf("circulation POST %s: %d, want 403", path, r.Status)
		}
	}
	if e.count(t, `SELECT count(*) FROM staff_users WHERE username = 'mallory'`) != 0 {
		t.Error("circulation staff created an account")
	}
	if e.count(t, `SELECT count(*) FROM audit_log WHERE action LIKE 'staff.%'`) < 4 {
		t.Error("account changes are not in the audit log")
	}
}
