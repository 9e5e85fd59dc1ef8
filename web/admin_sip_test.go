package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/sip"
	"github.com/stacks-ils/stacks/sip/siptest"
)

// sipAccount reads a SIP account by username.
func (e *testEnv) sipAccount(t *testing.T, username string) *sip.Account {
	t.Helper()
	var a *sip.Account
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		var id int64
		if err := tx.QueryRow(`SELECT id FROM sip_accounts WHERE username = ?`, username).Scan(&id); err != nil {
			return err
		}
		var err error
		a, err = sip.FindAccount(tx, id)
		return err
	})
	if err != nil {
		t.Fatalf("SIP account %s: %v", username, err)
	}
	return a
}

// exec runs a statement on the test database.
func (e *testEnv) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(query, args...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// sipSettingsForm is the settings form of the demo's kiosk as stored, every
// message allowed.
func sipSettingsForm() url.Values {
	f := url.Values{
		"institution":      {"CEN"},
		"branch":           {"CEN"},
		"hold_items":       {"barcode"},
		"sort_bins_source": {"server"},
		"sort_bins":        {""},
		"same_item":        {"answer"},
		"language":         {"000"},
	}
	for _, m := range sip.Messages {
		f.Add("allowed", m.ID)
	}
	return f
}

func TestAdminSIP(t *testing.T) {
	e := newDemoEnv(t)
	admin := e.client(t)
	if r := e.login(t, admin, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("admin login: %d", r.Status)
	}
	mustContain(t, "the administration index", e.get(t, admin, "/admin").Body, `<a href="/admin/sip">SIP accounts</a>`, "Self-check machines and sorters")

	kiosk := e.sipAccount(t, "kiosk")
	kioskPath := "/admin/sip/" + strconv.FormatInt(kiosk.ID, 10)
	e.exec(t, `UPDATE sip_accounts SET last_seen_at = ?, last_seen_addr = '10.0.0.5' WHERE id = ?`, db.FormatTime(e.Clock.Now()), kiosk.ID)
	r := e.get(t, admin, "/admin/sip")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /admin/sip: %d", r.Status)
	}
	mustContain(t, "the SIP accounts page", r.Body, "<h1>SIP accounts</h1>", `href="`+kioskPath+`">kiosk</a>`, "<td>CEN</td>", "<td>Central</td>",
		"from 10.0.0.5", "hold items as barcodes; server&#39;s sort bins; all messages allowed", "No lockouts")
	adminCheckLabels(t, "/admin/sip", r.Body)

	t.Run("Add", func(t *testing.T) {
		add := url.Values{"username": {"sorter1"}, "password": {"bins-please"}, "institution": {"CEN"}, "branch": {"EAS"}}
		for field, bad := range map[string]string{"username": "has space", "password": "abc", "institution": " ", "branch": "NOPE"} {
			r := e.post(t, admin, "/admin/sip", adminWith(add, field, bad))
			if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, field) == "" {
				t.Errorf("add with %s=%q: %d, want 422 with a message beside %s", field, bad, r.Status, field)
			}
			if field != "username" && !strings.Contains(r.Body, `value="sorter1"`) {
				t.Errorf("add with %s=%q: the typed username is lost", field, bad)
			}
			if strings.Contains(r.Body, "bins-please") {
				t.Errorf("add with %s=%q: the password comes back in the page", field, bad)
			}
		}
		r := e.post(t, admin, "/admin/sip", adminWith(add, "username", "kiosk"))
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "username"), "taken") {
			t.Errorf("a taken username: %d, %q", r.Status, fieldError(r.Body, "username"))
		}
		if n := e.count(t, `SELECT count(*) FROM sip_accounts`); n != 1 {
			t.Fatalf("refused forms saved accounts: %d accounts", n)
		}
		if r := e.post(t, admin, "/admin/sip", add); r.Status != http.StatusSeeOther || r.Location != "/admin/sip" {
			t.Fatalf("add sorter1: %d %s", r.Status, r.Location)
		}
		mustContain(t, "after adding", e.get(t, admin, "/admin/sip").Body, "SIP account sorter1 created for institution CEN at Eastside.", ">sorter1</a>", "never")
		if err := siptest.Login(t, e.DB, "sorter1", "bins-please"); err != nil {
			t.Errorf("the new account logs in: %v", err)
		}
		if e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'sip.account.create'`) != 2 {
			t.Error("the new account is not in the audit log")
		}
	})

	t.Run("Settings", func(t *testing.T) {
		r := e.get(t, admin, kioskPath)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d", kioskPath, r.Status)
		}
		mustContain(t, "the account page", r.Body, "<h1>SIP account kiosk</h1>", "Answer ok to a checkin of an item that was not on loan (sorters want this)",
			"--sip-sort-bins", "hold=1,transfer=2,shelf=3", "Login, status, resend and end session are always allowed", "from 10.0.0.5",
			`id="same_item-answer" name="same_item" value="answer" checked`, "no renewal is used", "Koha always renews",
			`<option value="000" selected>000 Unknown</option>`, `<option value="001">001 English</option>`, `<option value="027">027 Taiwanese</option>`)
		adminCheckLabels(t, kioskPath, r.Body)

		// Refused: what was typed comes back, nothing is saved.
		bad := adminWith(sipSettingsForm(), "sort_bins_source", "own", "sort_bins", "hold", "institution", "KIOSK-2")
		r = e.post(t, admin, kioskPath, bad)
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "sort_bins") == "" {
			t.Fatalf("bad sort bins: %d, %q", r.Status, fieldError(r.Body, "sort_bins"))
		}
		mustContain(t, "the refused form", r.Body, `value="hold"`, `value="KIOSK-2"`)
		for field, form := range map[string]url.Values{
			"institution": adminWith(sipSettingsForm(), "institution", ""),
			"branch":      adminWith(sipSettingsForm(), "branch", "NOPE"),
			"hold_items":  adminWith(sipSettingsForm(), "hold_items", "isbn"),
			"same_item":   adminWith(sipSettingsForm(), "same_item", "refuse"),
			"language":    adminWith(sipSettingsForm(), "language", "028"),
		} {
			if r := e.post(t, admin, kioskPath, form); r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, field) == "" {
				t.Errorf("bad %s: %d, want 422 with a message beside it", field, r.Status)
			}
		}
		if a := e.sipAccount(t, "kiosk"); a.Institution != "CEN" || a.Settings.SortBins != nil {
			t.Fatalf("refused forms were saved: %+v", a)
		}

		good := adminWith(sipSettingsForm(), "institution", "CEN2", "branch", "WES", "checked_in_ok", "1", "hold_items", "title",
			"sort_bins_source", "own", "sort_bins", "hold=1, transfer=2,shelf=3", "contact_without_pin", "1",
			"same_item", "renew", "language", "002")
		good["allowed"] = slices.DeleteFunc(good["allowed"], func(id string) bool { return id == "11" || id == "29" })
		r = e.post(t, admin, kioskPath, good)
		if r.Status != http.StatusSeeOther || r.Location != kioskPath {
			t.Fatalf("save settings: %d %s %s", r.Status, r.Location, fieldError(r.Body, "sort_bins"))
		}
		a := e.sipAccount(t, "kiosk")
		s := a.Settings
		if a.Institution != "CEN2" || a.BranchCode != "WES" || !s.CheckedInOK || s.HoldItems != sip.HoldItemsTitle || !s.ContactWithoutPIN ||
			s.SortBins.String() != "shelf=3,hold=1,transfer=2" || !slices.Equal(s.Denied, []string{"11", "29"}) ||
			s.SameItemCheckout != sip.SameItemRenew || s.Language != "002" {
			t.Errorf("stored: %+v %+v", a, s)
		}
		if e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'sip.account.update' AND detail LIKE '%checked_in_ok true%denied [11,29]%same item checkout renew, language 002'`) != 1 {
			t.Error("the change is not in the audit log")
		}
		r = e.get(t, admin, kioskPath)
		mustContain(t, "the saved settings", r.Body, "Settings of kiosk saved.", `value="shelf=3,hold=1,transfer=2"`, `value="CEN2"`,
			`id="same_item-renew" name="same_item" value="renew" checked`, `<option value="002" selected>002 French</option>`)
		if strings.Contains(r.Body, `id="allowed-11" name="allowed" value="11" checked`) || !strings.Contains(r.Body, `id="allowed-23" name="allowed" value="23" checked`) {
			t.Error("the message boxes do not show what is allowed")
		}
		mustContain(t, "the list after saving", e.get(t, admin, "/admin/sip").Body,
			"hold items as titles; sort bins shelf=3,hold=1,transfer=2; checked_in_ok; contact details without PIN; renews an item already lent; language 002 French; denied: Checkout, Renew")

		// Back to the server's map, every message allowed.
		if r := e.post(t, admin, kioskPath, adminWith(sipSettingsForm(), "sort_bins", "hold=9")); r.Status != http.StatusSeeOther {
			t.Fatalf("save defaults: %d", r.Status)
		}
		if s := e.sipAccount(t, "kiosk").Settings; s.SortBins != nil || len(s.Denied) != 0 || s.CheckedInOK || s.SameItemCheckout != sip.SameItemAnswer || s.Language != "000" {
			t.Errorf("the defaults are not stored: %+v", s)
		}
		if r := e.get(t, admin, "/admin/sip/999999"); r.Status != http.StatusNotFound {
			t.Errorf("no such account: %d, want 404", r.Status)
		}
	})

	t.Run("Active", func(t *testing.T) {
		if r := e.post(t, admin, kioskPath+"/active", url.Values{"active": {"0"}}); r.Status != http.StatusSeeOther || r.Location != kioskPath {
			t.Fatalf("deactivate: %d %s", r.Status, r.Location)
		}
		if e.sipAccount(t, "kiosk").Active {
			t.Fatal("still active")
		}
		if err := siptest.Login(t, e.DB, "kiosk", "kiosk"); err == nil {
			t.Error("a deactivated account logs in")
		}
		mustContain(t, "the deactivated account", e.get(t, admin, kioskPath).Body, "The SIP account is deactivated", "Reactivate kiosk")
		mustContain(t, "the list", e.get(t, admin, "/admin/sip").Body, "<strong>Deactivated</strong>")
		if r := e.post(t, admin, kioskPath+"/active", url.Values{"active": {"1"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("reactivate: %d", r.Status)
		}
		if err := siptest.Login(t, e.DB, "kiosk", "kiosk"); err != nil {
			t.Errorf("the reactivated account: %v", err)
		}
		if e.count(t, `SELECT count(*) FROM audit_log WHERE action IN ('sip.account.deactivate', 'sip.account.activate')`) != 2 {
			t.Error("activation is not in the audit log")
		}
	})

	t.Run("Password", func(t *testing.T) {
		r := e.post(t, admin, kioskPath+"/password", url.Values{"password": {"ab"}})
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "password") == "" {
			t.Errorf("a short password: %d", r.Status)
		}
		if r := e.post(t, admin, kioskPath+"/password", url.Values{"password": {"new-kiosk-pass"}}); r.Status != http.StatusSeeOther || r.Location != kioskPath {
			t.Fatalf("set the password: %d %s", r.Status, r.Location)
		}
		if err := siptest.Login(t, e.DB, "kiosk", "new-kiosk-pass"); err != nil {
			t.Errorf("the new password: %v", err)
		}
		if err := siptest.Login(t, e.DB, "kiosk", "kiosk"); err == nil {
			t.Error("the old password still logs in")
		}
		if e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'sip.account.password'`) != 1 {
			t.Error("the new password is not in the audit log")
		}
	})

	t.Run("Lockouts", func(t *testing.T) {
		var p *patrons.Patron
		if err := e.DB.Read(context.Background(), func(tx *db.Tx) (err error) {
			p, err = patrons.FindByCard(tx, "P0001")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		now := e.Clock.Now()
		loginKey := "login:kiosk|10.0.0.9"
		e.exec(t, `INSERT INTO login_throttle (key, failures, first_at, locked_until) VALUES (?, 5, ?, ?)`,
			loginKey, db.FormatTime(now), db.FormatTime(now.Add(15*time.Minute)))
		pinKey := "pin:" + strconv.FormatInt(p.ID, 10)
		e.exec(t, `INSERT INTO login_throttle (key, failures, first_at, locked_until) VALUES (?, 3, ?, NULL)`,
			pinKey, db.FormatTime(now.Add(-time.Minute)))
		r := e.get(t, admin, "/admin/sip")
		mustContain(t, "the lockouts", r.Body, "Failed logins", "<td>kiosk</td>", "<td>10.0.0.9</td>",
			"Wrong PINs", "<td>P0001 "+p.FirstName+" "+p.Surname+"</td>", "counting failures",
			`name="key" value="login:kiosk|10.0.0.9"`, `name="key" value="`+pinKey+`"`)

		if r := e.post(t, admin, "/admin/sip/lockouts/clear", url.Values{"key": {loginKey}}); r.Status != http.StatusSeeOther || r.Location != "/admin/sip" {
			t.Fatalf("lift: %d %s", r.Status, r.Location)
		}
		if e.count(t, `SELECT count(*) FROM login_throttle WHERE key = ?`, loginKey) != 0 {
			t.Error("the lockout is still there")
		}
		if e.count(t, `SELECT count(*) FROM login_throttle WHERE key = ?`, pinKey) != 1 {
			t.Error("lifting one lockout lifted another")
		}
		if e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'sip.lockout.clear' AND detail = ?`, loginKey) != 1 {
			t.Error("lifting is not in the audit log")
		}
		mustContain(t, "after lifting", e.get(t, admin, "/admin/sip").Body, "Lockout lifted")
		if r := e.post(t, admin, "/admin/sip/lockouts/clear", url.Values{"key": {loginKey}}); r.Status != http.StatusSeeOther {
			t.Fatalf("lift again: %d", r.Status)
		}
		mustContain(t, "after lifting again", e.get(t, admin, "/admin/sip").Body, "That lockout has ended already.")
		// The page lifts SIP2's keys only: staff sign-in's throttle shares the table.
		e.exec(t, `INSERT INTO login_throttle (key, failures, first_at, locked_until) VALUES ('user:desk', 5, ?, ?)`,
			db.FormatTime(now), db.FormatTime(now.Add(15*time.Minute)))
		if r := e.post(t, admin, "/admin/sip/lockouts/clear", url.Values{"key": {"user:desk"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("lift a staff key: %d", r.Status)
		}
		if e.count(t, `SELECT count(*) FROM login_throttle WHERE key = 'user:desk'`) != 1 {
			t.Error("the SIP page lifted a staff sign-in lockout")
		}
		e.exec(t, `DELETE FROM login_throttle WHERE key = 'user:desk'`)
	})

	t.Run("ForbiddenToCirculationStaff", func(t *testing.T) {
		desk := e.deskClient(t)
		for _, path := range []string{"/admin/sip", kioskPath} {
			if r := e.get(t, desk, path); r.Status != http.StatusForbidden {
				t.Errorf("circulation GET %s: %d, want 403", path, r.Status)
			}
		}
		for path, form := range map[string]url.Values{
			"/admin/sip":                {"username": {"mallory"}, "password": {"mallory"}, "institution": {"CEN"}, "branch": {"CEN"}},
			kioskPath:                   adminWith(sipSettingsForm(), "institution", "OWNED"),
			kioskPath + "/active":       {"active": {"0"}},
			kioskPath + "/password":     {"password": {"owned-now"}},
			"/admin/sip/lockouts/clear": {"key": {"pin:1"}},
		} {
			if r := e.post(t, desk, path, form); r.Status != http.StatusForbidden {
				t.Errorf("circulation POST %s: %d, want 403", path, r.Status)
			}
		}
		if a := e.sipAccount(t, "kiosk"); a.Institution == "OWNED" || !a.Active {
			t.Error("circulation staff changed an account")
		}
		if e.count(t, `SELECT count(*) FROM sip_accounts WHERE username = 'mallory'`) != 0 {
			t.Error("circulation staff created an account")
		}
	})
}
