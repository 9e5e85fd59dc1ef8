package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestNoticeTemplateRenderBounds: a notice template that loops without end is
// refused when saved, with the reason beside its field, and saves nothing; the
// live preview of one that writes 100 MB says why there is no preview.
func TestNoticeTemplateRenderBounds(t *testing.T) {
	e := newNoticesEnv(t, nil)
	admin := e.client(t)
	if r := e.login(t, admin, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("login: %d", r.Status)
	}
	form := url.Values{"subject": {"Overdue: {{.Count}}"}, "text": {"{{range 80000000}}{{end}}"}, "html": {"<p>{{.Patron.Name}}</p>"}, "action": {"save"}}
	r := e.post(t, admin, "/admin/notices/templates/overdue1", form)
	if r.Status != http.StatusUnprocessableEntity || !stoppedByBound(fieldError(r.Body, "text")) {
		t.Fatalf("save of an endless range: %d %q", r.Status, fieldError(r.Body, "text"))
	}
	if n := e.count(t, `SELECT count(*) FROM notice_templates`); n != 0 {
		t.Fatal("the template was saved")
	}
	form.Set("text", "Dear {{.Patron.Name}}")
	form.Set("html", "{{range 10000000}}0123456789{{end}}")
	r = e.post(t, admin, "/admin/notices/templates/overdue1/preview", form)
	if r.Status != http.StatusOK || !strings.Contains(r.Body, "does not work yet") || !stoppedByBound(r.Body) {
		t.Fatalf("live preview of 100 MB: %d %s", r.Status, r.Body)
	}
	form.Set("html", `<p>{{printf "%0100000000d" 1}}</p>`)
	r = e.post(t, admin, "/admin/notices/templates/overdue1", form)
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "html"), "width or precision over 1,000") {
		t.Fatalf("save of a 100 MB printf: %d %q", r.Status, fieldError(r.Body, "html"))
	}
	if n := e.count(t, `SELECT count(*) FROM notice_templates`); n != 0 {
		t.Fatal("the template was saved")
	}
}

// stoppedByBound reports whether msg is the refusal of an endless template:
// its step bound, or, on a machine slow enough (the race detector, a loaded
// CI host) to spend the render's 2 s before 100,000 steps, its time bound.
// Which comes first is the machine's; notices' own tests pin each bound.
func stoppedByBound(msg string) bool {
	return strings.Contains(msg, "loops or calls templates more than 100,000 times") ||
		strings.Contains(msg, "takes more than 2s to render")
}
