package marc_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// TestXMLReaderSyntaxError: XML that is not well formed ends the stream with a
// *marc.SyntaxError that says on which line, near which byte, and what is wrong,
// in words a cataloguer can act on; the good record before it is read.
func TestXMLReaderSyntaxError(t *testing.T) {
	const rec = `<record><leader>00000nam a2200000 a 4500</leader><controlfield tag="001">a</controlfield></record>`
	bad := func(text string) string {
		return `<record><leader>00000nam a2200000 a 4500</leader><datafield tag="245" ind1=" " ind2=" "><subfield code="a">` +
			text + `</subfield></datafield></record>`
	}
	for _, tc := range []struct {
		name, doc string
		line      int
		reason    []string
	}{
		{"Truncated", "<collection>\n" + rec + "\n" + `<record><leader>00000nam a22`, 3, []string{"cut short"}},
		{"TruncatedBetweenRecords", "<collection>\n" + rec + "\n", 3, []string{"cut short"}},
		{"BareAmpersand", "<collection>\n" + rec + "\n" + bad("Fish & chips") + "</collection>", 3, []string{"invalid character entity &", `written "&amp;"`}},
		{"DTDEntity", "<!DOCTYPE collection [\n<!ENTITY boom \"kaboom\">\n]>\n<collection>\n" + rec + "\n" + bad("&boom;") + "</collection>", 6,
			[]string{"invalid character entity &boom;", "DTD"}},
		{"TextOver8MB", "<collection>\n" + rec + "\n" + bad(strings.Repeat("x", marc.MaxXMLRecordLen+1)) + "</collection>", 3, []string{"longer than 8 MB"}},
		{"UnknownCharset", `<?xml version="1.0" encoding="KOI8-R"?>` + "\n<collection>" + rec + "</collection>", 1, []string{`"KOI8-R"`, "UTF-8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := marc.NewXMLReader(strings.NewReader(tc.doc))
			var err error
			n := 0
			for {
				if _, err = r.Next(); err != nil {
					break
				}
				n++
			}
			var se *marc.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *marc.SyntaxError", err)
			}
			if tc.name != "UnknownCharset" && n != 1 {
				t.Errorf("%d good records read before the fault, want 1", n)
			}
			if se.Line != tc.line {
				t.Errorf("line %d, want %d (%v)", se.Line, tc.line, se)
			}
			if se.Offset <= 0 && tc.name != "UnknownCharset" {
				t.Errorf("offset %d", se.Offset)
			}
			for _, want := range tc.reason {
				if !strings.Contains(se.Reason, want) {
					t.Errorf("reason %q lacks %q", se.Reason, want)
				}
			}
			if _, again := r.Next(); again != err {
				t.Errorf("the error is not sticky: %v", again)
			}
		})
	}

	t.Run("ReadFailureIsNotSyntax", func(t *testing.T) {
		r := marc.NewXMLReader(io.MultiReader(strings.NewReader("<collection>\n"+rec+"\n"), errReader{}))
		var err error
		for err == nil {
			_, err = r.Next()
		}
		var se *marc.SyntaxError
		if !errors.Is(err, errDisk) || errors.As(err, &se) {
			t.Fatalf("got %v, want the read error, not the document's fault", err)
		}
	})
}

var errDisk = errors.New("disk on fire")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errDisk }
