package marc_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/catalog/marc"
)

const sampleText = `=LDR  00000nam\a2200000\a\4500
=001  ocm123
=008  850701s1985\\\\nyu\\\\\\\\\\\00010\eng\\
=020  \\$a0441478123 (pbk.) :$c{dollar}7.50
=100  1\$aLe Guin, Ursula K.
=245  14$aThe left hand of darkness /$cUrsula K. Le Guin.
=650  \0$aAndrogyny$vFiction.
`

func TestParseText(t *testing.T) {
	rec, errs := marc.ParseText(sampleText)
	if errs != nil {
		t.Fatal(errs)
	}
	want := &marc.Record{Leader: "00000nam a2200000 a 4500", Fields: []marc.Field{
		{Tag: "001", Value: "ocm123"},
		{Tag: "008", Value: "850701s1985    nyu           00010 eng  "},
		{Tag: "020", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: "0441478123 (pbk.) :"}, {Code: 'c', Value: "$7.50"}}},
		{Tag: "100", Ind1: '1', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: "Le Guin, Ursula K."}}},
		{Tag: "245", Ind1: '1', Ind2: '4', Subfields: []marc.Subfield{{Code: 'a', Value: "The left hand of darkness /"}, {Code: 'c', Value: "Ursula K. Le Guin."}}},
		{Tag: "650", Ind1: ' ', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: "Androgyny"}, {Code: 'v', Value: "Fiction."}}},
	}}
	if !reflect.DeepEqual(rec, want) {
		t.Fatalf("parsed\n%+v\nwant\n%+v", rec, want)
	}
	if got := marc.FormatText(rec); got != sampleText {
		t.Errorf("formatted\n%s\nwant\n%s", got, sampleText)
	}
	// FormatLines is FormatText a line a string, without the line breaks.
	if got, want := marc.FormatLines(rec), strings.Split(strings.TrimSuffix(sampleText, "\n"), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("lines\n%q\nwant\n%q", got, want)
	}
	if got := marc.FormatLines(nil); got != nil {
		t.Errorf("lines of no record: %q", got)
	}
	// A browser's CR LF, spaces for blanks, one space after the tag, blank lines.
	loose := "=LDR  00000nam a2200000 a 4500\r\n\r\n=001 ocm123\r\n=245  10$aTitle\r\n"
	if rec, errs := marc.ParseText(loose); errs != nil || len(rec.Fields) != 2 || rec.Fields[1].Ind2 != '0' {
		t.Errorf("loose text: %+v %v", rec, errs)
	}
}

func TestParseTextErrors(t *testing.T) {
	text := strings.Join([]string{
		"=LDR  00000nam",                 // 1: short leader
		"=24  10$aTitle",                 // 2: tag of two characters
		"=245  1",                        // 3: one indicator
		"=245  1X$aTitle",                // 4: indicator X
		"=245  10Title",                  // 5: no subfield
		"=245  10$aTitle$",               // 6: empty code
		"=245  10$ATitle",                // 7: upper-case code
		"=001  10$aocm1",                 // 8: control field with a subfield
		"245  10$aTitle",                 // 9: no "="
		"=500  \\\\$aA good note.",       // 10: fine
		"=LDR  00000nam a2200000 a 4500", // 11: a second leader (line 1 is one)
		"=LDR  00000nam a2200000 a 4500", // 12: a third
	}, "\n")
	rec, errs := marc.ParseText(text)
	if rec != nil {
		t.Fatal("a record with faults was returned")
	}
	var lines []int
	for _, e := range errs {
		lines = append(lines, e.Line)
		if e.Reason == "" || e.Text == "" {
			t.Errorf("error without reason or text: %+v", e)
		}
	}
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12}; !reflect.DeepEqual(lines, want) {
		t.Errorf("errors on lines %v, want %v: %v", lines, want, errs)
	}
	if _, errs := marc.ParseText("=245  10$aNo leader"); len(errs) != 1 || !strings.Contains(errs[0].Reason, "leader") {
		t.Errorf("no leader: %v", errs)
	}
}

// TestFormatTextRealRecords: every record of the real files formats and
// parses back to itself.
func TestFormatTextRealRecords(t *testing.T) {
	for _, name := range []string{"microlif.001", "specials.001", "zebra-sample.mrc", "sandburg-1.xml"} {
		for _, rec := range readRecords(t, name) {
			text := marc.FormatText(rec)
			back, errs := marc.ParseText(text)
			if errs != nil {
				t.Errorf("%s: %v\n%s", name, errs, text)
				continue
			}
			if !reflect.DeepEqual(back, rec) {
				t.Errorf("%s: parsed back differently:\n%s\n%s", name, text, marc.FormatText(back))
			}
		}
	}
}

func readRecords(t testing.TB, name string) []*marc.Record {
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rr, err := marc.NewAutoReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []*marc.Record
	for {
		rec, err := rr.Next()
		if err != nil {
			if _, ok := err.(*marc.RecordError); ok {
				continue
			}
			return out
		}
		out = append(out, rec)
	}
}

// FuzzParseText: whatever is typed, ParseText returns a record or line
// errors, never both and never neither; a record it returns validates, and
// formats to a text that parses back to the same record and formats the same
// (format(parse(x)) is a fixed point).
func FuzzParseText(f *testing.F) {
	f.Add(sampleText)
	f.Add("=LDR  00000nam a2200000 a 4500\n=245  10$a{lcub}dollar}$b{{dollar}$c\\{bsol}\n=005  a{bsol}b\\c{tab}\n")
	f.Add("=LDR  \n=001  \n=245  \\\\$a")
	f.Add("=LDR  00000nam a2200000 a 4500\r\n=500  \\\\$a{lf}{cr}{tab}\r\n")
	for _, name := range []string{"microlif.001", "sandburg-1.xml"} {
		for i, rec := range readRecords(f, name) {
			if i < 3 {
				f.Add(marc.FormatText(rec))
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		rec, errs := marc.ParseText(s)
		if (rec == nil) == (errs == nil) {
			t.Fatalf("record %v and errors %v", rec, errs)
		}
		if rec == nil {
			for _, e := range errs {
				if e.Line < 1 || e.Reason == "" {
					t.Fatalf("bad line error %+v", e)
				}
			}
			return
		}
		if err := rec.Validate(); err != nil {
			t.Fatalf("parsed record does not validate: %v", err)
		}
		text := marc.FormatText(rec)
		back, errs := marc.ParseText(text)
		if errs != nil {
			t.Fatalf("formatted text does not parse: %v\n%q", errs, text)
		}
		if !reflect.DeepEqual(back, rec) {
			t.Fatalf("round trip differs:\n%+v\n%+v", rec, back)
		}
		if again := marc.FormatText(back); again != text {
			t.Fatalf("format(parse(x)) != x:\n%q\n%q", text, again)
		}
	})
}
