package catalog_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
)

// TestTemplates: each template's text parses once its title is typed, with a
// 24-character leader of its type and a 40-character 008 dated the day.
func TestTemplates(t *testing.T) {
	day := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	types := map[string]string{"book": "am", "dvd": "gm", "audiobook": "im", "serial": "as", "scratch": "am"}
	for _, tpl := range catalog.Templates() {
		text, ok := catalog.TemplateText(tpl.Code, day)
		if !ok {
			t.Fatalf("no text for %s", tpl.Code)
		}
		// An empty $a is allowed in the text; the title makes it a record.
		text = strings.Replace(text, "=245  10$a\n", "=245  10$aA title\n", 1)
		text = strings.Replace(text, "=245  00$a\n", "=245  00$aA title\n", 1)
		rec, errs := marc.ParseText(text)
		if errs != nil {
			t.Fatalf("%s: %v\n%s", tpl.Code, errs, text)
		}
		if got := rec.Leader[6:8]; got != types[tpl.Code] {
			t.Errorf("%s: leader type %q, want %q", tpl.Code, got, types[tpl.Code])
		}
		if f := rec.ControlField("008"); tpl.Code != "scratch" && (len(f) != 40 || !strings.HasPrefix(f, "260304") || f[35:38] != "eng") {
			t.Errorf("%s: 008 %q", tpl.Code, f)
		}
		if b := catalog.BibOf(rec); b.Title != "A title" {
			t.Errorf("%s: title %q", tpl.Code, b.Title)
		}
	}
	if _, ok := catalog.TemplateText("nope", day); ok {
		t.Error("an unknown template has a text")
	}
}
