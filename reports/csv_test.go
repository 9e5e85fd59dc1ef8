package reports_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/reports"
)

// csvHostileCells are cells that a spreadsheet would open as a formula under
// some separator if they went into the file as they are.
var csvHostileCells = []string{
	"Doe;=1+1;",
	"=HYPERLINK(\"http://example.com/\",\"click\")",
	"=cmd|' /C calc'!A0",
	"Smith,=1+1",
	"Smith, -2+3",
	"x\t=1+1",
	"x|@SUM(1,2)",
	"line\n=1+1",
	"line\r\n+1+1",
	"line\r-1+1",
	" =1+1",
	"\"=1+1\"",
	"x; \"=1+1",
	"x;\"\"=1+1",
	"+1",
	"-",
	"@SUM(A1)",
	"\t=1+1",
	"\r=1+1",
	"a;b;c",
	"Café, \"quoted\"\nline",
}

// csvSpreadsheetSeparators are the separators a spreadsheet may read a CSV
// file with: the comma, the semicolon (Excel in most of Europe), the tab and
// the pipe.
var csvSpreadsheetSeparators = []rune{',', ';', '\t', '|'}

// formulaField reports whether a spreadsheet would take field for a formula:
// past any spaces and quotes it trims, it starts with = + - @ tab or CR.
func formulaField(field string) bool {
	t := strings.TrimLeft(field, ` "`)
	return t != "" && strings.ContainsRune("=+-@\t\r", rune(t[0]))
}

// TestCSVNoFormulaUnderAnySeparator: a report whose cells (and column names)
// hold formulas behind a separator opens with no formula whichever separator a
// spreadsheet reads it with. It is read twice for each separator: by Go's CSV
// reader (as a spreadsheet that honours quotes does), and split at every
// separator and line break whatever the quotes (as a spreadsheet does past a
// field that did not start with a quote); no field of either starts with a
// formula character. Read with the comma, the file gives back each cell with
// only apostrophes added, and numbers as they are.
func TestCSVNoFormulaUnderAnySeparator(t *testing.T) {
	res := reports.Result{Columns: []reports.Column{{Name: "Title"}, {Name: "Loans", Numeric: true}, {Name: "=Patron;@x"}}}
	for i, v := range csvHostileCells {
		res.Rows = append(res.Rows, []string{v, []string{"-1", "3", "2.5", "=1+1"}[i%4], "ok"})
	}
	var buf bytes.Buffer
	if err := reports.WriteCSV(&buf, res); err != nil {
		t.Fatal(err)
	}
	file := buf.String()

	for _, sep := range csvSpreadsheetSeparators {
		r := csv.NewReader(strings.NewReader(file))
		r.Comma, r.LazyQuotes, r.FieldsPerRecord = sep, true, -1
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatalf("separator %q: %v", sep, err)
		}
		for i, rec := range recs {
			for j, f := range rec {
				if formulaField(f) && !(sep == ',' && j == 1 && isNumber(f)) {
					t.Errorf("separator %q, line %d field %d is a formula: %q", sep, i+1, j+1, f)
				}
			}
		}
		for i, field := range strings.FieldsFunc(file, func(r rune) bool { return r == sep || r == '\r' || r == '\n' }) {
			if formulaField(field) && !isNumber(field) {
				t.Errorf("split at %q regardless of quotes, piece %d is a formula: %q", sep, i+1, field)
			}
		}
	}

	recs, err := csv.NewReader(strings.NewReader(file)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(res.Rows)+1 {
		t.Fatalf("%d records, want %d", len(recs), len(res.Rows)+1)
	}
	if recs[0][2] != "'=Patron;'@x" {
		t.Errorf("column name %q", recs[0][2])
	}
	for i, row := range res.Rows {
		got := recs[i+1]
		if unquote(got[0]) != unquote(row[0]) {
			t.Errorf("cell %q came back as %q", row[0], got[0])
		}
		want := row[1]
		if want == "=1+1" {
			want = "'=1+1"
		}
		if got[1] != want {
			t.Errorf("numeric cell %q came back as %q", row[1], got[1])
		}
	}
	if got := recs[1][0]; got != "Doe;'=1+1;" {
		t.Errorf("Doe;=1+1; came back as %q", got)
	}
	if !strings.Contains(file, "\r\n\"Doe;'=1+1;\",-1,ok\r\n") {
		t.Errorf("a cell with a semicolon is not quoted: %q", file)
	}
}

// TestCSVCell: each place a field can begin gets an apostrophe only if a
// formula starts there, and the cell is quoted only if it holds a separator,
// a quote, a line break or a space at either end.
func TestCSVCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Middlemarch", "Middlemarch"},
		{"", ""},
		{"Le Guin, Ursula K.", `"Le Guin, Ursula K."`},
		{"a;b", `"a;b"`},
		{"a|b", `"a|b"`},
		{"a\tb", "\"a\tb\""},
		{"=1+1", "'=1+1"},
		{"Doe;=1+1;", `"Doe;'=1+1;"`},
		{"Doe; -1", `"Doe;' -1"`},
		{`x;"=1`, `"x;'""=1"`},
		{"x-y = z", "x-y = z"},
		{" padded ", `" padded "`},
		{"1 - 2", "1 - 2"},
	} {
		if got := reports.CSVCell(tc.in); got != tc.want {
			t.Errorf("CSVCell(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789.") == ""
}

// unquote is a cell without its apostrophes, CRLF read as LF (as Go's CSV
// reader does inside a quoted field).
func unquote(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "'", ""), "\r\n", "\n")
}
