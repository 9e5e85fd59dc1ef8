package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/notices"
	"github.com/stacks-ils/stacks/stackstest"
	"github.com/stacks-ils/stacks/web"
)

// fakeSender records what the test message sends.
type fakeSender struct {
	mu   sync.Mutex
	sent []notices.Outgoing
}

func (f *fakeSender) Send(_ context.Context, msgs []notices.Outgoing) []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, msgs...)
	return make([]error, len(msgs))
}

// newNoticesEnv is newDemoEnv with a mail relay (sender) configured.
func newNoticesEnv(t *testing.T, sender notices.Sender) *testEnv {
	t.Helper()
	c := dbtest.NewClock(dbtest.Monday)
	d := demotest.Demo(t, demo.Options{Titles: 50, Patrons: 20}, c.Now(), db.Options{Synchronous: "NORMAL"})
	d.Now = c.Now
	cfg := web.Config{DB: d, CachePreferences: true, NoticeSender: sender}
	if sender != nil {
		cfg.SMTP = notices.SMTPConfig{Host: "mail.example.org", From: "library@example.org"}
	}
	w := web.New(cfg)
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return &testEnv{DB: d, Clock: c, Srv: srv, Web: w}
}

func TestAdminNotices(t *testing.T) {
	sender := &fakeSender{}
	e := newNoticesEnv(t, sender)
	admin := e.client(t)
	if r := e.login(t, admin, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("login: %d", r.Status)
	}
	msgID := e.count(t, `SELECT max(id) FROM notice_messages`)
	if msgID == 0 {
		t.Fatal("the demo library has no notices")
	}

	t.Run("Queue", func(t *testing.T) {
		r := e.get(t, admin, "/admin/notices")
		if r.Status != http.StatusOK {
			t.Fatalf("GET /admin/notices: %d", r.Status)
		}
		mustContain(t, "the queue", r.Body, "<h1>Notices</h1>", "pending", "/notices/print?branch=CEN", "Daily runs", "mail.example.org")
		adminCheckLabels(t, "/admin/notices", r.Body)
		if r := e.get(t, admin, "/admin/notices?status=failed"); !strings.Contains(r.Body, "No notices.") {
			t.Error("the failed filter shows notices")
		}
		r = e.get(t, admin, "/admin/notices/"+strconv.Itoa(msgID))
		mustContain(t, "a notice", r.Body, `sandbox=""`, "srcdoc=", "Plain text", "Resend")
		if r := e.get(t, admin, "/admin/notices/999999"); r.Status != http.StatusNotFound {
			t.Errorf("a notice that does not exist: %d", r.Status)
		}
	})

	t.Run("Resend", func(t *testing.T) {
		id := e.count(t, `SELECT min(id) FROM notice_messages`)
		e.exec(t, `UPDATE notice_messages SET status = 'failed', last_error = '550 no such user' WHERE id = ?`, id)
		r := e.post(t, admin, "/admin/notices/"+strconv.Itoa(id)+"/resend", url.Values{"return": {"/admin/notices?status=failed"}})
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/admin/notices?status=failed" {
			t.Fatalf("resend: %d %s", r.Status, r.Header.Get("Location"))
		}
		if n := e.count(t, `SELECT count(*) FROM notice_messages WHERE id = ? AND status = 'pending' AND attempts = 0 AND last_error = ''`, id); n != 1 {
			t.Error("the resent notice is not pending again")
		}
	})

	t.Run("ResendAllFailed", func(t *testing.T) {
		e.exec(t, `UPDATE notice_messages SET status = 'failed', attempts = 13, last_error = '535 authentication failed'
			WHERE id IN (SELECT id FROM notice_messages WHERE delivery = 'email' ORDER BY id LIMIT 2)`)
		failed := e.count(t, `SELECT count(*) FROM notice_messages WHERE status = 'failed'`)
		r := e.get(t, admin, "/admin/notices?status=failed")
		mustContain(t, "the failed notices", r.Body, "Resend all failed ("+strconv.Itoa(failed)+")", `action="/admin/notices/resend-failed"`)
		desk := e.deskClient(t)
		if r := e.post(t, desk, "/admin/notices/resend-failed", nil); r.Status != http.StatusForbidden {
			t.Errorf("desk resends all failed: %d", r.Status)
		}
		r = e.post(t, admin, "/admin/notices/resend-failed", nil)
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != "/admin/notices?status=pending" {
			t.Fatalf("resend all failed: %d %s", r.Status, r.Header.Get("Location"))
		}
		if n := e.count(t, `SELECT count(*) FROM notice_messages WHERE status = 'failed'`); n != 0 {
			t.Errorf("%d notices still failed", n)
		}
		if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'notices.resend_failed' AND detail = ?`, strconv.Itoa(failed)+" notices"); n != 1 {
			t.Error("the resend is not in the audit log")
		}
		if r := e.get(t, admin, "/admin/notices"); strings.Contains(r.Body, "Resend all failed") {
			t.Error("the button shows with no failed notice")
		}
	})

	t.Run("Templates", func(t *testing.T) {
		r := e.get(t, admin, "/admin/notices/templates")
		mustContain(t, "the templates", r.Body, "Due soon", "Overdue, final notice", "Digest")
		r = e.get(t, admin, "/admin/notices/templates/predue")
		if r.Status != http.StatusOK {
			t.Fatalf("GET template: %d", r.Status)
		}
		mustContain(t, "the editor", r.Body, "Preview", "Save template", "{{range .Items}}", "Middlemarch")
		adminCheckLabels(t, "/admin/notices/templates/predue", r.Body)
		form := url.Values{"subject": {"Soon: {{.Count}} for {{.Patron.FirstName}}"}, "text": {"{{range .Items}}{{.Title}}{{end}}"}, "html": {"<p>{{.Patron.Name}}</p>"}}
		r = e.post(t, admin, "/admin/notices/templates/predue", adminWith(form, "action", "preview", "subject", "{{.Nope}}"))
		if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "subject") == "" {
			t.Fatalf("a broken subject: %d %q", r.Status, fieldError(r.Body, "subject"))
		}
		r = e.post(t, admin, "/admin/notices/templates/predue", adminWith(form, "action", "preview"))
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "Soon: 2 for Alex") {
			t.Fatalf("preview: %d", r.Status)
		}
		if n := e.count(t, `SELECT count(*) FROM notice_templates`); n != 0 {
			t.Fatal("a preview saved the template")
		}
		// The live preview (the page's script asks for it as the fields change):
		// the preview alone, or why there is none, saving nothing.
		r = e.post(t, admin, "/admin/notices/templates/predue/preview", form)
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "Soon: 2 for Alex") || strings.Contains(r.Body, "<html") {
			t.Fatalf("live preview: %d %s", r.Status, r.Body)
		}
		r = e.post(t, admin, "/admin/notices/templates/predue/preview", adminWith(form, "subject", "{{.Nope}}"))
		if r.Status != http.StatusOK || !strings.Contains(r.Body, "does not work yet") {
			t.Fatalf("live preview of a broken subject: %d %s", r.Status, r.Body)
		}
		if n := e.count(t, `SELECT count(*) FROM notice_templates`); n != 0 {
			t.Fatal("a live preview saved the template")
		}
		if r := e.post(t, admin, "/admin/notices/templates/predue", adminWith(form, "action", "save")); r.Status != http.StatusSeeOther {
			t.Fatalf("save: %d", r.Status)
		}
		mustContain(t, "after saving", e.get(t, admin, "/admin/notices/templates").Body, "(changed)")
		if r := e.post(t, admin, "/admin/notices/templates/predue/reset", nil); r.Status != http.StatusSeeOther {
			t.Fatalf("reset: %d", r.Status)
		}
		if n := e.count(t, `SELECT count(*) FROM notice_templates`); n != 0 {
			t.Error("reset kept the template")
		}
		if r := e.get(t, admin, "/admin/notices/templates/nope"); r.Status != http.StatusNotFound {
			t.Errorf("an unknown template: %d", r.Status)
		}
	})

	t.Run("Settings", func(t *testing.T) {
		r := e.get(t, admin, "/admin/notices/settings")
		mustContain(t, "the settings", r.Body, "mail.example.org", "Send test message", "Overdue 3")
		adminCheckLabels(t, "/admin/notices/settings", r.Body)
		if r := e.post(t, admin, "/admin/notices/settings/test", url.Values{"to": {"nope"}}); r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "to") == "" {
			t.Errorf("a bad address: %d", r.Status)
		}
		if r := e.post(t, admin, "/admin/notices/settings/test", url.Values{"to": {"chief@example.org"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("test message: %d", r.Status)
		}
		if len(sender.sent) != 1 || sender.sent[0].To != "chief@example.org" {
			t.Errorf("sent %+v", sender.sent)
		}
		if r := e.post(t, admin, "/admin/notices/settings", url.Values{"run_at": {"25:00"}, "hold_days": {"2"}, "card_days": {"x"}}); r.Status != http.StatusUnprocessableEntity ||
			fieldError(r.Body, "run_at") == "" || fieldError(r.Body, "card_days") == "" {
			t.Errorf("bad settings: %d", r.Status)
		}
		if r := e.post(t, admin, "/admin/notices/settings", url.Values{"run_at": {"06:30"}, "hold_days": {"3"}, "card_days": {"10"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("settings: %d", r.Status)
		}
		if n := e.count(t, `SELECT count(*) FROM preferences WHERE name = 'notices_run_at' AND value = '06:30'`); n != 1 {
			t.Error("the run time is not saved")
		}
		rule := url.Values{"category": {"0"}, "item_type": {"0"}, "predue_days": {"3"}, "overdue1_days": {"5"}, "overdue2_days": {"2"}, "overdue3_days": {"0"}}
		if r := e.post(t, admin, "/admin/notices/rules", rule); r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, "overdue2_days") == "" {
			t.Errorf("a second notice before the first: %d", r.Status)
		}
		if r := e.post(t, admin, "/admin/notices/rules", adminWith(rule, "overdue2_days", "9")); r.Status != http.StatusSeeOther {
			t.Fatalf("rule: %d", r.Status)
		}
		if n := e.count(t, `SELECT count(*) FROM notice_rules WHERE predue_days = 3 AND overdue2_days = 9`); n != 1 {
			t.Error("the rule is not saved")
		}
	})

	t.Run("DeskCannotAdminister", func(t *testing.T) {
		desk := e.deskClient(t)
		if r := e.get(t, desk, "/admin/notices"); r.Status != http.StatusForbidden {
			t.Errorf("desk on /admin/notices: %d", r.Status)
		}
	})
}

func TestPatronNoticesAndPrintBatch(t *testing.T) {
	e := newNoticesEnv(t, nil)
	desk := e.deskClient(t)
	// A patron without email: notices are printed, email cannot be chosen.
	pid := e.count(t, `SELECT min(m.patron_id) FROM notice_messages m JOIN patrons p ON p.id = m.patron_id WHERE m.delivery = 'print' AND p.email = ''`)
	if pid == 0 {
		t.Fatal("the demo library has no printed notices")
	}
	path := "/patrons/" + strconv.Itoa(pid)
	r := e.get(t, desk, path)
	mustContain(t, "the patron page", r.Body, "<h2 id=\"patron-notices-h\">Notices</h2>", "To print", "Save notice choices")
	r = e.post(t, desk, path+"/notices", url.Values{"notice_overdue": {"email"}})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "notices_notice_overdue"), "email address") {
		t.Fatalf("email without an address: %d %q", r.Status, fieldError(r.Body, "notices_notice_overdue"))
	}
	if r := e.post(t, desk, path+"/notices", url.Values{"notice_overdue": {"none"}, "notice_predue": {"print"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("save choices: %d", r.Status)
	}
	if n := e.count(t, `SELECT count(*) FROM notice_preferences WHERE patron_id = ?`, pid); n != 2 {
		t.Errorf("%d choices stored, want 2", n)
	}
	if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'notices.preferences'`); n != 1 {
		t.Error("the change is not audited")
	}

	// The print batch of the desk's branch: one notice a page, then marked printed.
	r = e.get(t, desk, "/notices/print")
	if r.Status != http.StatusOK {
		t.Fatalf("print batch: %d", r.Status)
	}
	pending := e.count(t, `SELECT count(*) FROM notice_messages m JOIN branches b ON b.id = m.branch_id WHERE b.code = 'CEN' AND m.delivery = 'print' AND m.status = 'pending'`)
	if got := strings.Count(r.Body, `class="slip notice-page"`); got != pending || pending == 0 {
		t.Fatalf("the batch shows %d notices, want %d", got, pending)
	}
	form := url.Values{"branch_id": {strconv.Itoa(e.count(t, `SELECT id FROM branches WHERE code = 'CEN'`))}}
	for _, id := range idsIn(r.Body) {
		form.Add("id", id)
	}
	if r := e.post(t, desk, "/notices/print", form); r.Status != http.StatusSeeOther {
		t.Fatalf("mark printed: %d", r.Status)
	}
	mustContain(t, "the batch after printing", e.get(t, desk, "/notices/print?branch=CEN").Body, "No notices to print for Central.")
	mustContain(t, "the patron page after printing", e.get(t, desk, path).Body, "Printed")
}

// idsIn returns the values of the hidden id fields of a page.
func idsIn(body string) []string {
	var out []string
	for _, part := range strings.Split(body, `name="id" value="`)[1:] {
		out = append(out, part[:strings.IndexByte(part, '"')])
	}
	return out
}

// TestNoticesPrintedBranchUnreadable: marking a batch printed answers 404 only
// for a branch that does not exist; a branch that cannot be read (here its
// table is gone, as in an outage) is a 500, and the log says why.
func TestNoticesPrintedBranchUnreadable(t *testing.T) {
	c := dbtest.NewClock(dbtest.Monday)
	d := demotest.Demo(t, demo.Options{Titles: 10, Patrons: 5}, c.Now(), db.Options{Synchronous: "NORMAL"})
	d.Now = c.Now
	var logs stackstest.Buffer
	w := web.New(web.Config{DB: d, CachePreferences: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	e := &testEnv{DB: d, Clock: c, Srv: srv, Web: w}
	desk := e.deskClient(t)

	if r := e.post(t, desk, "/notices/print", url.Values{"branch_id": {"999999"}}); r.Status != http.StatusNotFound {
		t.Fatalf("a branch that does not exist: %d, want 404", r.Status)
	}
	cen := strconv.Itoa(e.count(t, `SELECT id FROM branches WHERE code = 'CEN'`))
	e.exec(t, `ALTER TABLE branches RENAME TO branches_gone`)
	t.Cleanup(func() { e.exec(t, `ALTER TABLE branches_gone RENAME TO branches`) })
	r := e.post(t, desk, "/notices/print", url.Values{"branch_id": {cen}})
	if r.Status != http.StatusInternalServerError {
		t.Fatalf("a branch that cannot be read: %d, want 500\n%s", r.Status, r.Body)
	}
	if !strings.Contains(logs.String(), "request failed") || !strings.Contains(logs.String(), "branches") {
		t.Errorf("the failure is not logged:\n%s", logs.String())
	}
}
