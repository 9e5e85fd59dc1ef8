package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestAdminCodes(t *testing.T) {
	e := newAdminEnv(t)
	r := e.get(t, e.Admin, "/admin/codes")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /admin/codes: %d", r.Status)
	}
	mustContain(t, "the codes page", r.Body, "<td>EAS</td>", "<td>ADULT</td>", "<td>DVD</td>")
	adminCheckLabels(t, "/admin/codes", r.Body)

	for path, form := range map[string]url.Values{
		"/admin/codes/branch":    {"code": {"wes"}, "name": {"West Branch"}},
		"/admin/codes/category":  {"code": {"SENIOR"}, "name": {"Senior"}},
		"/admin/codes/item-type": {"code": {"REF"}, "name": {"Reference"}, "not_for_loan": {"1"}},
	} {
		if r := e.post(t, e.Admin, path, form); r.Status != http.StatusSeeOther {
			t.Fatalf("POST %s: %d", path, r.Status)
		}
	}
	r = e.get(t, e.Admin, "/admin/codes")
	mustContain(t, "after adding", r.Body, "<td>WES</td><td>West Branch</td>", "<td>SENIOR</td><td>Senior</td><td>12 months</td>", "<td>REF</td>", "Item type added.")
	if e.count(t, `SELECT not_for_loan FROM item_types WHERE code = 'REF'`) != 1 {
		t.Error("the reference type is for loan")
	}
	if e.count(t, `SELECT count(*) FROM branches WHERE code = 'WES' AND closes_at = '20:00'`) != 1 {
		t.Error("the new branch has no default hours")
	}
	// The new codes are usable at once: a rule for them.
	if !strings.Contains(e.get(t, e.Admin, "/admin/rules/new").Body, "Senior") {
		t.Error("the rule form does not offer the new category")
	}

	// Refusals come back beside the field, with what was typed.
	for _, tc := range []struct {
		path, field string
		form        url.Values
	}{
		{"/admin/codes/branch", "branch", url.Values{"code": {"W E S"}, "name": {"Typed name"}}},
		{"/admin/codes/branch", "branch", url.Values{"code": {"WES"}, "name": {"Typed name"}}},
		{"/admin/codes/branch", "branch_name", url.Values{"code": {"NOR"}, "name": {""}}},
		{"/admin/codes/category", "category", url.Values{"code": {"adult"}, "name": {"Typed name"}}},
		{"/admin/codes/item-type", "item_type_name", url.Values{"code": {"MAP"}, "name": {strings.Repeat("x", 201)}}},
	} {
		r := e.post(t, e.Admin, tc.path, tc.form)
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, tc.field) == "" {
			t.Errorf("POST %s %v: %d, want 422 with a message beside %s", tc.path, tc.form, r.Status, tc.field)
		}
		if tc.form.Get("name") == "Typed name" && !strings.Contains(r.Body, `value="Typed name"`) {
			t.Errorf("POST %s %v: the typed name is lost", tc.path, tc.form)
		}
	}

	desk := e.client(t)
	e.login(t, desk, "desk", "desk")
	if r := e.post(t, desk, "/admin/codes/branch", url.Values{"code": {"EVIL"}, "name": {"Evil"}}); r.Status != http.StatusForbidden {
		t.Errorf("circulation staff adding a branch: %d, want 403", r.Status)
	}
	if e.count(t, `SELECT count(*) FROM branches WHERE code = 'EVIL'`) != 0 {
		t.Error("circulation staff added a branch")
	}
}
