package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// textareaText is the MARC editor's text on a page.
func textareaText(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<textarea id="marc"[^>]*>(.*?)</textarea>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no MARC textarea in\n%s", body)
	}
	return html.UnescapeString(m[1])
}

// TestRecordMARCEditor walks the MARC editor as a cataloguer does, without
// JavaScript: a record from the book template, an edit checked before it is
// saved, faulty lines refused with their numbers, a save over a newer version
// refused, and an old version restored.
func TestRecordMARCEditor(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)

	r := e.get(t, c, "/records/new/marc")
	mustContain(t, "the templates", r.Body, "Book</a>", "DVD (video)</a>", "Audiobook (CD)</a>", "Serial (magazine, journal)</a>", "From scratch</a>")
	r = e.get(t, c, "/records/new/marc?template=book")
	text := textareaText(t, r.Body)
	if !strings.HasPrefix(text, `=LDR  00000nam\a2200000\i\4500`) || !strings.Contains(text, "=336  \\\\$atext$btxt$2rdacontent") {
		t.Fatalf("the book template:\n%s", text)
	}
	if hasInlineScript(r.Body) {
		t.Error("the editor has inline script")
	}
	text = strings.Replace(text, "=245  10$a\n", "=245  10$aQuixotic ballast /$cIlse Vantongeren.\n", 1)
	r = e.post(t, c, "/records/new/marc", url.Values{"marc": {text}, "step": {"preview"}})
	if r.Status != http.StatusOK {
		t.Fatalf("preview of a new record: %d\n%s", r.Status, r.Body)
	}
	mustContain(t, "the preview", r.Body, "Added", "Quixotic ballast", `value="save"`, `value="edit"`)
	r = e.post(t, c, "/records/new/marc", url.Values{"marc": {text}, "step": {"save"}})
	if r.Status != http.StatusSeeOther || !regexp.MustCompile(`^/records/[0-9]+$`).MatchString(r.Location) {
		t.Fatalf("create: %d to %q", r.Status, r.Location)
	}
	record := r.Location
	r = e.get(t, c, record)
	mustContain(t, "the new record's page", squashed(r.Body), "<h1>Quixotic ballast</h1>", `href="`+record+`/marc"`)

	r = e.get(t, c, record+"/marc")
	text = textareaText(t, r.Body)
	if strings.Contains(text, "=020") {
		t.Errorf("the template's empty fields were kept:\n%s", text)
	}
	edited := text + "=500  \\\\$aSigned by the author.\n"
	r = e.post(t, c, record+"/marc", url.Values{"marc": {edited}, "base": {"1"}, "step": {"preview"}})
	mustContain(t, "the edit's preview", squashed(r.Body), "Added", "=500 \\\\$aSigned by the author.", "lines are unchanged")
	r = e.post(t, c, record+"/marc", url.Values{"marc": {edited}, "base": {"1"}, "step": {"edit"}})
	if got := textareaText(t, r.Body); got != edited {
		t.Errorf("back to editing lost the text:\n%s", got)
	}

	bad := strings.Replace(edited, "=500  \\\\$a", "=500  \\X$a", 1) + "=24  x\n"
	r = e.post(t, c, record+"/marc", url.Values{"marc": {bad}, "base": {"1"}, "step": {"preview"}})
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("faulty text: %d", r.Status)
	}
	mustContain(t, "the faults", squashed(r.Body), "correct these lines", "indicators", `aria-invalid="true"`, `aria-describedby="marc-help marc-errors"`)
	if n := strings.Count(r.Body, "<li>"); n < 2 {
		t.Errorf("%d faulty lines listed, want 2", n)
	}

	r = e.post(t, c, record+"/marc", url.Values{"marc": {edited}, "base": {"1"}, "step": {"save"}})
	if r.Status != http.StatusSeeOther || r.Location != record {
		t.Fatalf("save: %d to %q", r.Status, r.Location)
	}
	r = e.post(t, c, record+"/marc", url.Values{"marc": {text}, "base": {"1"}, "step": {"save"}})
	if r.Status != http.StatusConflict {
		t.Fatalf("save over a newer version: %d", r.Status)
	}
	mustContain(t, "the refused save", squashed(r.Body), "saved by someone else", `name="base" value="2"`)
	// The quick form sends the version it showed, for its save to write
	// through against.
	r = e.get(t, c, record+"/edit")
	mustContain(t, "the quick form", r.Body, `name="base" value="2"`)

	r = e.get(t, c, record+"/marc")
	mustContain(t, "the versions", r.Body, "Compare and restore", record+"/marc/versions?v=1")
	r = e.get(t, c, record+"/marc/versions")
	mustContain(t, "the versions page", r.Body, "Compare and restore", record+"/marc/versions?v=1")
	r = e.get(t, c, record+"/marc/versions?v=1")
	mustContain(t, "the restore preview", squashed(r.Body), "Removed", "Signed by the author.", "Restore version 1")
	r = e.post(t, c, record+"/marc/versions", url.Values{"v": {"1"}})
	if r.Status != http.StatusSeeOther || r.Location != record {
		t.Fatalf("restore: %d to %q", r.Status, r.Location)
	}
	r = e.get(t, c, record+"/marc")
	if got := textareaText(t, r.Body); strings.Contains(got, "Signed by the author") {
		t.Errorf("after restoring version 1:\n%s", got)
	}
	if r := e.get(t, c, record+"/marc/versions?v=9"); r.Status != http.StatusNotFound {
		t.Errorf("version 9: %d", r.Status)
	}
}
