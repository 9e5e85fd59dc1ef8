package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// marcXML is a MARCXML collection of n good records, then bad (if any), then the
// collection's end (unless bad cuts the file short).
func marcXML(prolog string, n int, bad string, end bool) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + prolog + `<collection xmlns="http://www.loc.gov/MARC21/slim">` + "\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `<record><leader>01142cam  2200301 a 4500</leader><controlfield tag="001">XT%05d</controlfield>`+
			`<datafield tag="245" ind1="0" ind2="0"><subfield code="a">Well-formed title %d</subfield></datafield></record>`+"\n", i, i)
	}
	b.WriteString(bad)
	if end {
		b.WriteString("</collection>\n")
	}
	return []byte(b.String())
}

// TestAdminImportMalformedXML: MARCXML that is not well formed is refused with a
// 422 and a message beside the upload field that says what is wrong and on which
// line, and nothing of it is imported, though 600 good records (more than a
// batch) come before the fault.
func TestAdminImportMalformedXML(t *testing.T) {
	e := newAdminEnv(t)
	form := map[string]string{"branch": "CEN", "item_type": "BOOK", "generate": "1"}
	const good = 600
	badRecord := func(title string) string {
		return `<record><leader>01142cam  2200301 a 4500</leader><controlfield tag="001">BAD</controlfield>` +
			`<datafield tag="245" ind1="0" ind2="0"><subfield code="a">` + title + `</subfield></datafield></record>` + "\n"
	}
	whole := marcXML("", good, "", true)
	for _, tc := range []struct {
		name string
		file []byte
		want []string // in the message, besides the line
		line int
	}{
		{"Truncated", whole[:len(whole)-len("</record>\n</collection>\n")-40], []string{"cut short"}, good + 2},
		{"BareAmpersand", marcXML("", good, badRecord("Fish & chips"), true), []string{"&amp;"}, good + 3},
		{"DTDEntity", marcXML(`<!DOCTYPE collection [<!ENTITY boom "kaboom">]>`+"\n", good, badRecord("Big &boom;"), true),
			[]string{"&amp;boom;", "DTD"}, good + 4},
		{"TextOver8MB", marcXML("", good, badRecord(strings.Repeat("x", 9<<20)), true), []string{"longer than 8 MB"}, good + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.postFile(t, e.Admin, "/admin/import", "file", "bad.xml", tc.file, form)
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422\n%.2000s", r.Status, r.Body)
			}
			msg := fieldError(r.Body, "file")
			if msg == "" {
				m := regexp.MustCompile(`<p class="field-error" id="file-error"[^>]*>([^<]*)</p>`).FindStringSubmatch(r.Body)
				if m != nil {
					msg = m[1]
				}
			}
			if msg == "" {
				t.Fatalf("no message beside the upload field:\n%.3000s", r.Body)
			}
			t.Logf("beside the field: %s", msg)
			for _, want := range append(tc.want, "not well-formed MARCXML", fmt.Sprintf("at line %d ", tc.line), "Nothing was imported") {
				if !strings.Contains(msg, want) {
					t.Errorf("the message %q does not say %q", msg, want)
				}
			}
			if strings.Contains(r.Body, "Imported bad.xml") {
				t.Error("the page shows an import summary")
			}
			if n := e.count(t, `SELECT count(*) FROM records`); n != 0 {
				t.Errorf("%d records imported from a malformed file, want none", n)
			}
		})
	}

	t.Run("WellFormedImports", func(t *testing.T) {
		r := e.postFile(t, e.Admin, "/admin/import", "file", "good.xml", marcXML("", good, "", true), form)
		if r.Status != http.StatusOK || !strings.Contains(r.Body, fmt.Sprintf("<dt>Created</dt><dd>%d</dd>", good)) {
			t.Fatalf("a well-formed file: %d\n%.2000s", r.Status, r.Body)
		}
	})
}
