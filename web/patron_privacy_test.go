package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPatronExport: the patron page links to the export; any staff member gets
// the patron's data as a JSON download without the PIN's hash, and the audit
// log records who took it.
func TestPatronExport(t *testing.T) {
	e := newDemoEnv(t)
	desk := e.deskClient(t)
	path := e.patronPath(t, "P0002")
	if r := e.get(t, desk, path); !strings.Contains(r.Body, `href="`+path+`/export"`) || strings.Contains(r.Body, "/purge") {
		t.Error("the patron page lacks the export link, or shows circulation staff the delete link")
	}
	r := e.get(t, desk, path+"/export")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") ||
		!strings.Contains(r.Header.Get("Content-Disposition"), `filename="patron-P0002.json"`) {
		t.Fatalf("export: %d %q %q", r.Status, r.Header.Get("Content-Type"), r.Header.Get("Content-Disposition"))
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.Body), &doc); err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"patron", "loans", "holds", "ledger", "notices", "notice_preferences", "audit"} {
		if _, ok := doc[section]; !ok {
			t.Errorf("the export lacks %s", section)
		}
	}
	if !strings.Contains(string(doc["patron"]), `"surname": "Owing"`) || strings.Contains(r.Body, "pin_hash") {
		t.Errorf("patron section %s", doc["patron"])
	}
	if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'patron.export' AND actor = 'desk'`); n != 1 {
		t.Errorf("%d export audit entries, want 1", n)
	}
	if r := e.get(t, desk, "/patrons/999999/export"); r.Status != http.StatusNotFound {
		t.Errorf("export of no patron: %d, want 404", r.Status)
	}
}

// TestPatronPurge: only administrators delete a patron, after ticking the
// confirmation; a patron who owes money is refused with the reason.
func TestPatronPurge(t *testing.T) {
	e := newDemoEnv(t)
	admin := e.client(t)
	if r := e.login(t, admin, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatal("admin login")
	}
	owing := strings.TrimPrefix(e.patronPath(t, "P0002"), "/patrons/")
	// P0001 has nothing out and owes nothing in the demo library.
	good := strings.TrimPrefix(e.patronPath(t, "P0001"), "/patrons/")
	if n := e.count(t, `SELECT count(*) FROM loans WHERE patron_id = ? AND returned_at IS NULL`, good) +
		e.count(t, `SELECT count(*) FROM holds WHERE patron_id = ? AND status IN ('queued','in_transit','waiting')`, good) +
		e.count(t, `SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE patron_id = ?`, good); n != 0 {
		t.Fatalf("P0001 has something out or owes (%d)", n)
	}

	if r := e.get(t, admin, "/patrons/"+good); !strings.Contains(r.Body, `href="/admin/patrons/`+good+`/purge"`) {
		t.Error("the patron page lacks the administrator's delete link")
	}
	t.Run("ErrOwes", func(t *testing.T) {
		r := e.get(t, admin, "/admin/patrons/"+owing+"/purge")
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "cannot be deleted yet: the patron owes 12.50") || strings.Contains(r.Body, `name="confirm"`) {
			t.Errorf("confirmation page for P0002: %d, %s", r.Status, r.Body)
		}
		r = e.post(t, admin, "/admin/patrons/"+owing+"/purge", url.Values{"confirm": {"yes"}})
		if r.Status != http.StatusUnprocessableEntity && r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "owes 12.50") {
			t.Errorf("purge of P0002: %d, want refused with the amount", r.Status)
		}
		if e.count(t, `SELECT count(*) FROM patrons WHERE id = ?`, owing) != 1 {
			t.Error("P0002 was deleted")
		}
	})
	t.Run("ErrNotConfirmed", func(t *testing.T) {
		r := e.post(t, admin, "/admin/patrons/"+good+"/purge", url.Values{})
		if r.Status != http.StatusSeeOther || e.count(t, `SELECT count(*) FROM patrons WHERE id = ?`, good) != 1 {
			t.Errorf("unconfirmed purge: %d; the patron must stay", r.Status)
		}
	})
	t.Run("ErrCirculationStaff", func(t *testing.T) {
		r := e.post(t, e.deskClient(t), "/admin/patrons/"+good+"/purge", url.Values{"confirm": {"yes"}})
		if r.Status != http.StatusForbidden || e.count(t, `SELECT count(*) FROM patrons WHERE id = ?`, good) != 1 {
			t.Errorf("purge by circulation staff: %d, want 403 and the patron kept", r.Status)
		}
	})
	t.Run("OK", func(t *testing.T) {
		r := e.post(t, admin, "/admin/patrons/"+good+"/purge", url.Values{"confirm": {"yes"}})
		if r.Status != http.StatusSeeOther || r.Location != "/patrons" {
			t.Fatalf("purge: %d to %q", r.Status, r.Location)
		}
		if e.count(t, `SELECT count(*) FROM patrons WHERE id = ?`, good) != 0 || e.count(t, `SELECT count(*) FROM loans WHERE patron_id = ?`, good) != 0 {
			t.Error("the patron or their loans are still there")
		}
		if e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'patron.purge' AND object_id = ? AND actor = 'admin'`, good) != 1 {
			t.Error("no purge audit entry")
		}
		if r := e.get(t, admin, "/patrons/"+good); r.Status != http.StatusNotFound {
			t.Errorf("the deleted patron's page: %d, want 404", r.Status)
		}
	})
}

// TestPatronKeepHistory: the patron form's "Keep loan history" box is stored
// and shown ticked again.
func TestPatronKeepHistory(t *testing.T) {
	e := newDemoEnv(t)
	desk := e.deskClient(t)
	path := e.patronPath(t, "P0003")
	form := url.Values{"card": {"P0003"}, "surname": {"Waiting"}, "first_name": {"Casey"}, "email": {""}, "phone": {""},
		"address": {""}, "category": {"ADULT"}, "home_branch": {"CEN"}, "notes": {""}, "desk_message": {""}, "keep_history": {"1"}}
	if r := e.post(t, desk, path, form); r.Status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	if n := e.count(t, `SELECT keep_history FROM patrons WHERE card = 'P0003'`); n != 1 {
		t.Error("keep_history was not stored")
	}
	if r := e.get(t, desk, path+"/edit"); !strings.Contains(r.Body, `id="keep_history" name="keep_history" value="1" checked`) {
		t.Error("the form does not show the box ticked")
	}
	if r := e.get(t, desk, path); !strings.Contains(r.Body, "keeps their loan history") {
		t.Error("the patron page does not say the history is kept")
	}
	form.Del("keep_history")
	e.post(t, desk, path, form)
	if n := e.count(t, `SELECT keep_history FROM patrons WHERE card = 'P0003'`); n != 0 {
		t.Error("unticking did not clear keep_history")
	}
}
