package marc_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// testFiles are the real records in testdata, with the counts their README gives
// (and yaz-marcdump agrees with).
var testFiles = []struct {
	name    string
	format  marc.Format
	records int
	empty   int            // bare record terminators, reported as "empty record"
	titles  map[int]string // record index -> 245 $a
}{
	{"microlif.001", marc.FormatISO2709, 18, 0, map[int]string{
		0:  "Rising tides /",
		2:  "Murder, she meowed /",
		17: "The gift of the sacred dog :",
	}},
	{"specials.001", marc.FormatISO2709, 14, 0, map[int]string{
		0:  "History of the United States during the administrations of Thomas Jefferson and James Madison /",
		13: "It's okay to say no :",
	}},
	{"zebra-sample.mrc", marc.FormatISO2709, 24, 2, map[int]string{
		0:  "How to program a computer",
		13: "Internet world.",
		22: "NDN, sharing success to improve schools.",
	}},
	{"sandburg-1.xml", marc.FormatMARCXML, 1, 0, map[int]string{
		0: "Arithmetic /",
	}},
}

func readFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// readAll reads every record, collecting *RecordErrors; any other error fails.
func readAll(tb testing.TB, r marc.RecordReader) ([]*marc.Record, []*marc.RecordError) {
	tb.Helper()
	var recs []*marc.Record
	var bad []*marc.RecordError
	for i := 0; ; i++ {
		if i > 1_000_000 {
			tb.Fatal("Next never returned io.EOF")
		}
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs, bad
		}
		var re *marc.RecordError
		if errors.As(err, &re) {
			bad = append(bad, re)
			continue
		}
		if err != nil {
			tb.Fatalf("Next: %v", err)
		}
		recs = append(recs, rec)
	}
}

func mustReadFile(tb testing.TB, name string) []*marc.Record {
	tb.Helper()
	r, err := marc.NewAutoReader(bytes.NewReader(readFile(tb, name)))
	if err != nil {
		tb.Fatal(err)
	}
	recs, _ := readAll(tb, r)
	return recs
}

// yazCount counts the records yaz-marcdump finds, by their leader lines.
func yazCount(t *testing.T, path string, format marc.Format) int {
	t.Helper()
	in := "marc"
	if format == marc.FormatMARCXML {
		in = "marcxml"
	}
	out, err := exec.Command("yaz-marcdump", "-i", in, "-o", "line", path).Output()
	if err != nil {
		t.Fatalf("yaz-marcdump %s: %v", path, err)
	}
	return len(regexp.MustCompile(`(?m)^[0-9]{5}[a-z ]`).FindAll(out, -1))
}

// compareWithYaz checks every field against yaz-marcdump's line format. yaz does
// not convert character sets by default, so records with non-ASCII bytes are
// skipped.
func compareWithYaz(t *testing.T, path string, recs []*marc.Record) {
	t.Helper()
	out, err := exec.Command("yaz-marcdump", "-i", "marc", "-o", "line", path).Output()
	if err != nil {
		t.Fatalf("yaz-marcdump %s: %v", path, err)
	}
	blocks := strings.Split(strings.TrimRight(string(out), "\n"), "\n\n")
	if len(blocks) != len(recs) {
		t.Fatalf("yaz-marcdump prints %d records, we read %d", len(blocks), len(recs))
	}
	compared := 0
	for i, block := range blocks {
		if !isASCII(block) {
			continue
		}
		_, yazFields, _ := strings.Cut(block, "\n") // the leader line: ours is normalized
		var ours strings.Builder
		for _, f := range recs[i].Fields {
			if f.IsControl() {
				fmt.Fprintf(&ours, "%s %s\n", f.Tag, f.Value)
				continue
			}
			fmt.Fprintf(&ours, "%s %c%c", f.Tag, f.Ind1, f.Ind2)
			for _, s := range f.Subfields {
				fmt.Fprintf(&ours, " $%c %s", s.Code, s.Value)
			}
			ours.WriteString("\n")
		}
		if got := strings.TrimRight(ours.String(), "\n"); got != yazFields {
			t.Errorf("record %d differs from yaz-marcdump:\n got %q\nwant %q", i, got, yazFields)
		}
		compared++
	}
	if compared < len(recs)-1 {
		t.Errorf("compared only %d of %d records with yaz", compared, len(recs))
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func TestReadTestdata(t *testing.T) {
	_, yazErr := exec.LookPath("yaz-marcdump")
	if yazErr != nil {
		t.Log("yaz-marcdump is not installed: checking the fixed counts only")
	}
	for _, tf := range testFiles {
		t.Run(tf.name, func(t *testing.T) {
			data := readFile(t, tf.name)
			if got := marc.Detect(data); got != tf.format {
				t.Errorf("Detect = %v, want %v", got, tf.format)
			}
			var r marc.RecordReader
			if tf.format == marc.FormatMARCXML {
				r = marc.NewXMLReader(bytes.NewReader(data))
			} else {
				r = marc.NewReader(bytes.NewReader(data))
			}
			recs, bad := readAll(t, r)
			if len(recs) != tf.records || len(bad) != tf.empty {
				t.Fatalf("read %d records and %d errors, want %d and %d (errors: %v)", len(recs), len(bad), tf.records, tf.empty, bad)
			}
			for _, e := range bad {
				if e.Reason != "empty record" {
					t.Errorf("unexpected error %v", e)
				}
			}
			if yazErr == nil {
				if n := yazCount(t, filepath.Join("testdata", tf.name), tf.format); n != len(recs) {
					t.Errorf("yaz-marcdump finds %d records, we find %d", n, len(recs))
				}
				if tf.format == marc.FormatISO2709 {
					compareWithYaz(t, filepath.Join("testdata", tf.name), recs)
				}
			}
			for i, want := range tf.titles {
				if got := recs[i].FieldsByTag("245")[0].Sub('a'); got != want {
					t.Errorf("record %d: 245 $a = %q, want %q", i, got, want)
				}
			}
			for i, rec := range recs {
				if rec.Leader[9] != 'a' {
					t.Errorf("record %d: leader/09 = %q, want 'a' (UTF-8)", i, rec.Leader[9])
				}
				if err := rec.Validate(); err != nil {
					t.Errorf("record %d: %v", i, err)
				}
			}
		})
	}
}

func TestZebraEmptyRecords(t *testing.T) {
	_, bad := readAll(t, marc.NewReader(bytes.NewReader(readFile(t, "zebra-sample.mrc"))))
	want := []marc.RecordError{
		{Index: 24, Offset: 23705, Reason: "empty record"},
		{Index: 25, Offset: 23706, Reason: "empty record"},
	}
	if len(bad) != len(want) {
		t.Fatalf("got %d errors, want %d", len(bad), len(want))
	}
	for i := range want {
		if *bad[i] != want[i] {
			t.Errorf("error %d = %+v, want %+v", i, *bad[i], want[i])
		}
	}
}

func TestFieldHelpers(t *testing.T) {
	rec := mustReadFile(t, "sandburg-1.xml")[0]
	if got := rec.ControlField("001"); got != "   92005291 " {
		t.Errorf(`ControlField("001") = %q`, got)
	}
	if got := rec.ControlField("009"); got != "" {
		t.Errorf(`ControlField("009") = %q, want ""`, got)
	}
	f650 := rec.FieldsByTag("650")
	if len(f650) != 5 {
		t.Fatalf("%d 650 fields, want 5", len(f650))
	}
	if f650[4].Sub('a') != "Visual perception." || f650[4].Ind2 != '1' {
		t.Errorf("last 650 = %+v", f650[4])
	}
	if f650[0].Ind1 != ' ' || f650[0].Ind2 != '0' {
		t.Errorf("650 indicators %q%q", f650[0].Ind1, f650[0].Ind2)
	}
	if got := f650[0].Subs('x'); !reflect.DeepEqual(got, []string{"Juvenile poetry."}) {
		t.Errorf("650 $x = %q", got)
	}
	f020 := rec.FieldsByTag("020")[0]
	if f020.Sub('c') != "$15.95" || f020.Sub('z') != "" || f020.Subs('z') != nil {
		t.Errorf("020: %+v", f020)
	}
	if !rec.FieldsByTag("008")[0].IsControl() || f020.IsControl() {
		t.Error("IsControl is wrong")
	}
	if rec.FieldsByTag("999") != nil {
		t.Error("FieldsByTag of a missing tag is not nil")
	}
	if got := rec.FieldsByTag("245")[0].Sub('c'); got != "Carl Sandburg ; illustrated as an anamorphic adventure by Ted Rand." {
		t.Errorf("245 $c = %q", got)
	}
}

func TestDecodeMARC8(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"ASCII", "Rising tides /", "Rising tides /"},
		{"AcuteComposes", "\xe2ecole", "école"},
		{"GraveAndUmlaut", "\xe1a la \xe8uber", "à la über"},
		{"CedillaCapital", "\xf0Ca va", "Ça va"},
		{"NoPrecomposed", "\xe6k", "k\u0306"},
		{"TwoMarksVietnamese", "\xe3\xe2e", "ế"},
		{"TwoMarksCanonicalOrder", "\xe3\xf2e", "ệ"},
		{"MarkAtEnd", "abc\xe8", "abc\u0308"},
		{"MarkBeforeSpacingANSEL", "\xe2\xbc", "ớ"},
		{"LigatureHalves", "\xebt\xecs", "t\ufe20s\ufe21"},
		{"Spacing", "\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbc\xbd\xc0\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc8",
			"ŁØĐÞÆŒʹ·♭®±ƠƯʼʻłøđþæœʺı£ðơư°ℓ℗©♯¿¡ß€"},
		{"AE", "\xa5", "Æ"},
		{"Undefined", "a\xbfb", "a\ufffdb"},
		{"NonSortMarkers", "\x88The \x89cat", "\u0098The \u009ccat"},
		{"Subscript", "H\x1bb2\x1bsO", "H₂O"},
		{"Superscript", "E=mc\x1bp2\x1bs", "E=mc²"},
		{"GreekSymbols", "\x1bgabc\x1bs", "αβγ"},
		{"CyrillicDropped", "a\x1b(Nabc\x1b(Bd", "ad"},
		{"CJKDropped", "x\x1b$1!!!\x1b(By", "xy"},
		{"LoneEscape", "a\x1b", "a"},
		{"UnknownEscape", "a\x1bZb", "aZb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := marc.DecodeMARC8([]byte(tt.in)); got != tt.want {
				t.Errorf("DecodeMARC8(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// rawField is a field as bytes, without its field terminator.
type rawField struct{ tag, body string }

// buildISO encodes fields by hand, so tests can make records this package would
// never write: MARC-8, bad bytes. leader/00-04 and 12-16 are filled in.
func buildISO(leader string, fields ...rawField) []byte {
	var dir, data strings.Builder
	for _, f := range fields {
		fmt.Fprintf(&dir, "%s%04d%05d", f.tag, len(f.body)+1, data.Len())
		data.WriteString(f.body + "\x1e")
	}
	base := 24 + dir.Len() + 1
	total := base + data.Len() + 1
	l := fmt.Sprintf("%05d", total) + leader[5:12] + fmt.Sprintf("%05d", base) + leader[17:]
	return []byte(l + dir.String() + "\x1e" + data.String() + "\x1d")
}

const marc8Leader = "00000nam  2200000 a 4500"

func TestReadMARC8Record(t *testing.T) {
	raw := buildISO(marc8Leader,
		rawField{"001", "rec1"},
		rawField{"245", "10\x1faL'\xe2ecole des femmes /\x1fcMoli\xe1ere.\xe2"},
		rawField{"500", "  \x1fa\x1b(NXYZ\x1fbstill Cyrillic: \x1b(Bback\x1fc\xa5sop"},
	)
	rec, err := marc.NewReader(bytes.NewReader(raw)).Next()
	if err != nil {
		t.Fatal(err)
	}
	f := rec.FieldsByTag("245")[0]
	if f.Sub('a') != "L'école des femmes /" || f.Sub('c') != "Molière.\u0301" {
		t.Errorf("245 = %+v", f)
	}
	f = rec.FieldsByTag("500")[0]
	want := []marc.Subfield{{Code: 'a', Value: ""}, {Code: 'b', Value: "  back"}, {Code: 'c', Value: "Æsop"}}
	if !reflect.DeepEqual(f.Subfields, want) {
		t.Errorf("500 = %q, want %q (the escape lasts across subfields)", f.Subfields, want)
	}
	if rec.Leader[9] != 'a' {
		t.Errorf("leader/09 = %q, want 'a'", rec.Leader[9])
	}
}

func TestReadUTF8(t *testing.T) {
	t.Run("InvalidBytesReplaced", func(t *testing.T) {
		l := []byte(marc8Leader)
		l[9] = 'a'
		raw := buildISO(string(l), rawField{"245", "10\x1faCaf\xc3\xa9 \xff\xfe ok\x01"})
		rec, err := marc.NewReader(bytes.NewReader(raw)).Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.FieldsByTag("245")[0].Sub('a'); got != "Café \ufffd ok\ufffd" {
			t.Errorf("245 $a = %q", got)
		}
	})
	t.Run("MislabelledAsMARC8", func(t *testing.T) {
		// Leader says MARC-8 but the bytes are UTF-8 (common in the wild): valid
		// UTF-8 with non-ASCII bytes and no escapes is taken as UTF-8.
		raw := buildISO(marc8Leader, rawField{"245", "10\x1faCaf\xc3\xa9"})
		rec, err := marc.NewReader(bytes.NewReader(raw)).Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.FieldsByTag("245")[0].Sub('a'); got != "Café" {
			t.Errorf("245 $a = %q", got)
		}
	})
}

// equalRecords fails with the first difference between two record lists.
func equalRecords(t *testing.T, got, want []*marc.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if reflect.DeepEqual(got[i], want[i]) {
			continue
		}
		if got[i].Leader != want[i].Leader {
			t.Fatalf("record %d: leader %q, want %q", i, got[i].Leader, want[i].Leader)
		}
		for j := range want[i].Fields {
			if j >= len(got[i].Fields) || !reflect.DeepEqual(got[i].Fields[j], want[i].Fields[j]) {
				var g any = "missing"
				if j < len(got[i].Fields) {
					g = got[i].Fields[j]
				}
				t.Fatalf("record %d field %d: got %+v, want %+v", i, j, g, want[i].Fields[j])
			}
		}
		t.Fatalf("record %d: got %d fields, want %d", i, len(got[i].Fields), len(want[i].Fields))
	}
}

func writeISO(t *testing.T, recs []*marc.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range recs {
		if err := marc.WriteISO2709(&buf, r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func writeXML(t *testing.T, recs []*marc.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := marc.NewXMLWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, tf := range testFiles {
		t.Run(tf.name, func(t *testing.T) {
			recs := mustReadFile(t, tf.name)

			iso := writeISO(t, recs)
			fromISO, bad := readAll(t, marc.NewReader(bytes.NewReader(iso)))
			if len(bad) > 0 {
				t.Fatalf("re-reading our ISO 2709: %v", bad)
			}
			equalRecords(t, fromISO, recs)
			if again := writeISO(t, fromISO); !bytes.Equal(again, iso) {
				t.Error("writing the re-read records gives different bytes")
			}

			xmlDoc := writeXML(t, recs)
			fromXML, bad := readAll(t, marc.NewXMLReader(bytes.NewReader(xmlDoc)))
			if len(bad) > 0 {
				t.Fatalf("re-reading our MARCXML: %v", bad)
			}
			equalRecords(t, fromXML, recs)

			// ISO 2709 -> MARCXML -> ISO 2709 gives the same bytes.
			if back := writeISO(t, fromXML); !bytes.Equal(back, iso) {
				t.Error("ISO 2709 -> MARCXML -> ISO 2709 changed the bytes")
			}

			for i, rec := range recs {
				s, err := marc.ToXML(rec)
				if err != nil {
					t.Fatal(err)
				}
				one, bad := readAll(t, marc.NewXMLReader(strings.NewReader(s)))
				if len(bad) > 0 || len(one) != 1 {
					t.Fatalf("record %d: ToXML reads back as %d records, errors %v", i, len(one), bad)
				}
				equalRecords(t, one, recs[i:i+1])
			}
		})
	}
}

func TestRoundTripAwkwardValues(t *testing.T) {
	rec := &marc.Record{
		Leader: "00000cam a2200000 a 4500",
		Fields: []marc.Field{
			{Tag: "001", Value: " id <&> \"'\t "},
			{Tag: "245", Ind1: '"', Ind2: '<', Subfields: []marc.Subfield{
				{Code: '&', Value: "line\nbreak\r\nand CR\r ]]> </subfield>"},
				{Code: '"', Value: ""},
				{Code: 'a', Value: "  leading and trailing  "},
			}},
			{Tag: "500", Ind1: ' ', Ind2: ' '},
			{Tag: "LDR", Ind1: '1', Ind2: '2', Subfields: []marc.Subfield{{Code: 'a', Value: "Ωμέγα 漢字 🙂"}}},
		},
	}
	var buf bytes.Buffer
	if err := marc.WriteISO2709(&buf, rec); err != nil {
		t.Fatal(err)
	}
	first, _ := readAll(t, marc.NewReader(&buf))
	if len(first) != 1 {
		t.Fatal("no record")
	}
	want := *rec
	want.Leader = first[0].Leader // the reader fills in length and base address
	equalRecords(t, first, []*marc.Record{&want})
	fromXML, bad := readAll(t, marc.NewXMLReader(bytes.NewReader(writeXML(t, first))))
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	equalRecords(t, fromXML, first)
}

func TestWriteISO2709Leader(t *testing.T) {
	rec := &marc.Record{Leader: "99999nam  2299999 a 4599", Fields: []marc.Field{{Tag: "001", Value: "x"}}}
	var buf bytes.Buffer
	if err := marc.WriteISO2709(&buf, rec); err != nil {
		t.Fatal(err)
	}
	// 24 leader + 12 directory + 1 + "x" + FT + RT.
	want := "00040nam a2200037 a 4500" + "001000200000" + "\x1e" + "x\x1e\x1d"
	if buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
	if rec.Leader != "99999nam  2299999 a 4599" {
		t.Error("WriteISO2709 changed the caller's record")
	}
}

func TestWriteRefusesInvalid(t *testing.T) {
	ok := marc.Field{Tag: "245", Ind1: '1', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: "T"}}}
	tests := []struct {
		name string
		rec  marc.Record
	}{
		{"ShortLeader", marc.Record{Leader: "00000nam", Fields: []marc.Field{ok}}},
		{"LeaderControlByte", marc.Record{Leader: "00000nam a2200000 a 450\x1e", Fields: []marc.Field{ok}}},
		{"BadTag", marc.Record{Leader: marc8Leader, Fields: []marc.Field{{Tag: "24", Ind1: ' ', Ind2: ' '}}}},
		{"TagWithDelimiter", marc.Record{Leader: marc8Leader, Fields: []marc.Field{{Tag: "2\x1f5", Ind1: ' ', Ind2: ' '}}}},
		{"FieldTerminatorInValue", marc.Record{Leader: marc8Leader, Fields: []marc.Field{{Tag: "001", Value: "a\x1eb"}}}},
		{"InvalidUTF8", marc.Record{Leader: marc8Leader, Fields: []marc.Field{{Tag: "001", Value: "\xff"}}}},
		{"ControlWithSubfields", marc.Record{Leader: marc8Leader, Fields: []marc.Field{{Tag: "001", Subfields: ok.Subfields}}}},
		{"DataWithValue", marc.Record{Leader: marc8Leader, Fields: []marc.Field{{Tag: "245", Value: "T", Ind1: ' ', Ind2: ' '}}}},
		{"ZeroIndicator", marc.Record{Leader: marc8Leader, Fields: []marc.Field{{Tag: "245", Ind2: ' '}}}},
		{"BadCode", marc.Record{Leader: marc8Leader, Fields: []marc.Field{{Tag: "245", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 0x1f}}}}}},
		{"FieldOver9999", marc.Record{Leader: marc8Leader, Fields: []marc.Field{{Tag: "520", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: strings.Repeat("x", 10000)}}}}}},
		{"RecordOver99999", marc.Record{Leader: marc8Leader, Fields: func() []marc.Field {
			var fs []marc.Field
			for range 12 {
				fs = append(fs, marc.Field{Tag: "520", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: strings.Repeat("x", 9000)}}})
			}
			return fs
		}()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := marc.WriteISO2709(&buf, &tt.rec); err == nil {
				t.Error("WriteISO2709 accepted the record")
			}
			if buf.Len() > 0 {
				t.Errorf("WriteISO2709 wrote %d bytes of a refused record", buf.Len())
			}
			if tt.name == "FieldOver9999" || tt.name == "RecordOver99999" {
				return // fine in MARCXML
			}
			if _, err := marc.ToXML(&tt.rec); err == nil {
				t.Error("ToXML accepted the record")
			}
			buf.Reset()
			w := marc.NewXMLWriter(&buf)
			if err := w.Write(&tt.rec); err == nil {
				t.Error("XMLWriter accepted the record")
			}
			if buf.Len() > 0 {
				t.Errorf("XMLWriter wrote %d bytes of a refused record", buf.Len())
			}
		})
	}
}

// malformed builds input as good record, bad bytes, good record.
func TestMalformedISO2709(t *testing.T) {
	good := func(title string) []byte {
		var buf bytes.Buffer
		err := marc.WriteISO2709(&buf, &marc.Record{Leader: "00000nam a2200000 a 4500", Fields: []marc.Field{
			{Tag: "001", Value: "id-" + title},
			{Tag: "245", Ind1: '1', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: title}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	setLen := func(b []byte, s string) []byte { b = bytes.Clone(b); copy(b, s); return b }
	middle := good("Middle")
	// The directory of middle starts at 24; its first entry is the 001.
	patch := func(at int, s string) []byte { b := bytes.Clone(middle); copy(b[at:], s); return b }
	dataStart := 24 + 2*12 + 1

	tests := []struct {
		name    string
		bad     []byte
		wantErr string // "" when the reader recovers the middle record
		last    bool   // the bad bytes end the input
	}{
		{"WrongLengthRecovered", setLen(middle, "00077"), "", false},
		{"NonNumericLengthRecovered", setLen(middle, "0x1?!"), "", false},
		{"HugeLengthRecovered", setLen(middle, "99999"), "", false},
		{"LengthTooShortRecovered", setLen(middle, "00003"), "", false},
		{"LengthSpansTwoRecordsRecovered", setLen(middle, fmt.Sprintf("%05d", len(middle)+len(good("Last")))), "", false},
		{"MissingRecordTerminator", middle[:len(middle)-1], "record terminator missing", false},
		{"MissingFieldTerminator", patch(len(middle)-2, "x"), "does not end with a field terminator", false},
		{"TruncatedFile", middle[:40], "truncated record", true},
		{"TruncatedInLeader", middle[:10], "truncated record", true},
		{"DirectoryNotMultipleOf12", append(append(bytes.Clone(middle[:24]), '0'), middle[24:]...), "not a multiple of 12", false},
		{"DirectoryNonNumeric", patch(24+3, "00x4"), "not numeric", false},
		{"DirectoryPastEnd", patch(24+12+7, "99000"), "outside", false},
		{"DirectoryZeroLength", patch(24+3, "0000"), "outside", false},
		{"DirectoryBadTag", patch(24, "2 5"), "tag", false},
		{"NoDirectoryTerminator", []byte("00030nam a2200025 a 45000010\x1d"), "no field terminator", false},
		{"TooShort", []byte("00010nam\x1d"), "only 9 bytes", false},
		{"Garbage", []byte("this is not MARC"), "not a record", false},
		{"GarbageWithTerminator", []byte("this is not MARC\x1d"), "only 17 bytes", false},
		{"EmptyRecord", []byte{0x1d}, "empty record", false},
		{"BadIndicator", patch(dataStart+len("id-Middle")+1, "\x01"), "indicators", false},
		{"DataBeforeSubfield", patch(dataStart+len("id-Middle")+3, "x"), "before the first subfield", false},
		{"BadSubfieldCode", patch(dataStart+len("id-Middle")+4, "\x80"), "subfield code", false},
		{"LeaderControlByte", patch(7, "\x01"), "leader byte 7", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, last := good("First"), good("Last")
			in := append(append(bytes.Clone(first), tt.bad...), last...)
			if tt.last {
				in = append(bytes.Clone(first), tt.bad...)
			}
			r := marc.NewReader(bytes.NewReader(in))
			expect := func(title string) {
				t.Helper()
				rec, err := r.Next()
				if err != nil {
					t.Fatalf("want record %q, got error %v", title, err)
				}
				if got := rec.FieldsByTag("245")[0].Sub('a'); got != title {
					t.Fatalf("got record %q, want %q", got, title)
				}
			}
			expect("First")
			switch {
			case tt.wantErr == "":
				expect("Middle")
			default:
				_, err := r.Next()
				var re *marc.RecordError
				if !errors.As(err, &re) {
					t.Fatalf("got %v, want a *RecordError", err)
				}
				if re.Index != 1 || re.Offset != int64(len(first)) || !strings.Contains(re.Reason, tt.wantErr) {
					t.Errorf("got %+v, want index 1, offset %d, reason containing %q", *re, len(first), tt.wantErr)
				}
				if !strings.Contains(re.Error(), fmt.Sprintf("at byte %d", len(first))) {
					t.Errorf("Error() = %q does not give the position", re.Error())
				}
			}
			if !tt.last {
				expect("Last")
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Fatalf("want io.EOF at the end, got %v", err)
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Fatalf("want io.EOF again, got %v", err)
			}
		})
	}
}

func TestNoTerminatorWithinMaxLength(t *testing.T) {
	write := func(buf *bytes.Buffer, id string, fields int) {
		rec := &marc.Record{Leader: "00000nam a2200000 a 4500", Fields: []marc.Field{{Tag: "001", Value: id}}}
		for range fields {
			rec.Fields = append(rec.Fields, marc.Field{Tag: "520", Ind1: ' ', Ind2: ' ',
				Subfields: []marc.Subfield{{Code: 'a', Value: strings.Repeat("y", 9000)}}})
		}
		if err := marc.WriteISO2709(buf, rec); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		garbage int
		fields  int // 9000-byte fields in the record after the garbage
	}{
		{"SmallRecordAfter", 250_000, 0},
		{"BigRecordStartsInWindow", 50_000, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			buf.Write(bytes.Repeat([]byte("x"), tt.garbage))
			write(&buf, "after", tt.fields)
			recs, bad := readAll(t, marc.NewReader(&buf))
			if len(recs) != 1 || recs[0].ControlField("001") != "after" {
				t.Fatalf("the record after the garbage was lost: %d records, errors %v", len(recs), bad)
			}
			if len(bad) == 0 || !strings.Contains(bad[0].Reason, "no record terminator within 99999 bytes") || bad[0].Offset != 0 {
				t.Fatalf("errors: %v", bad)
			}
			for i, e := range bad[1:] {
				if e.Offset <= bad[i].Offset {
					t.Errorf("error offsets do not advance: %v", bad)
				}
			}
		})
	}
}

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n > 0 {
		f.n = 0
		return copy(p, "0002"), nil
	}
	return 0, errors.New("disk on fire")
}

func TestReaderIOError(t *testing.T) {
	r := marc.NewReader(&failingReader{n: 1})
	for range 2 {
		_, err := r.Next()
		var re *marc.RecordError
		if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("got %v, want the I/O error (not a RecordError), sticky", err)
		}
	}
}

func TestXMLReaderVariants(t *testing.T) {
	const rec = `<leader>00000nam a2200000 a 4500</leader><controlfield tag="001">x1</controlfield>` +
		`<datafield tag="245" ind1="1" ind2="0"><subfield code="a">Title</subfield></datafield>`
	tests := []struct {
		name string
		doc  string
		n    int
	}{
		{"Collection", `<collection xmlns="http://www.loc.gov/MARC21/slim"><record>` + rec + `</record><record>` + rec + `</record></collection>`, 2},
		{"SingleRecord", `<?xml version="1.0"?><record xmlns="http://www.loc.gov/MARC21/slim">` + rec + `</record>`, 1},
		{"NoNamespace", `<collection><record>` + rec + `</record></collection>`, 1},
		{"ByteOrderMark", "\xef\xbb\xbf<?xml version=\"1.0\"?>\n<record>" + rec + `</record>`, 1},
		{"Prefixed", `<marc:collection xmlns:marc="http://www.loc.gov/MARC21/slim"><marc:record>` +
			strings.NewReplacer("<leader", "<marc:leader", "</leader", "</marc:leader", "<controlfield", "<marc:controlfield",
				"</controlfield", "</marc:controlfield", "<datafield", "<marc:datafield", "</datafield", "</marc:datafield",
				"<subfield", "<marc:subfield", "</subfield", "</marc:subfield").Replace(rec) +
			`</marc:record></marc:collection>`, 1},
		{"OAIWrapper", `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords><record><header><identifier>oai:1</identifier></header>` +
			`<metadata><record xmlns="http://www.loc.gov/MARC21/slim">` + rec + `</record></metadata></record></ListRecords></OAI-PMH>`, 1},
		{"Latin1", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><record>" + strings.Replace(rec, "Title", "Titl\xe9", 1) + "</record>", 1},
		{"ExtraElementsAndComments", `<collection><!-- c --><record><foo>bar</foo>` + rec + `<?pi x?></record></collection>`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, bad := readAll(t, marc.NewXMLReader(strings.NewReader(tt.doc)))
			if len(bad) > 0 || len(recs) != tt.n {
				t.Fatalf("got %d records, errors %v; want %d", len(recs), bad, tt.n)
			}
			want := "Title"
			if tt.name == "Latin1" {
				want = "Titlé"
			}
			if got := recs[0].FieldsByTag("245")[0].Sub('a'); got != want || recs[0].ControlField("001") != "x1" {
				t.Errorf("got %+v", recs[0])
			}
		})
	}
}

func TestXMLReaderBadRecords(t *testing.T) {
	good := func(id string) string {
		return `<record><leader>00000nam a2200000 a 4500</leader><controlfield tag="001">` + id + `</controlfield></record>`
	}
	tests := []struct{ name, bad, reason string }{
		{"NoLeader", `<record><controlfield tag="001">x</controlfield></record>`, "no leader"},
		{"ShortLeader", `<record><leader>00000nam</leader></record>`, "want 24"},
		{"TwoLeaders", `<record><leader>00000nam a2200000 a 4500</leader><leader>00000nam a2200000 a 4500</leader></record>`, "two leaders"},
		{"BadTag", `<record><leader>00000nam a2200000 a 4500</leader><controlfield tag="1">x</controlfield></record>`, "tag"},
		{"ControlfieldDataTag", `<record><leader>00000nam a2200000 a 4500</leader><controlfield tag="245">x</controlfield></record>`, "data field tag"},
		{"DatafieldControlTag", `<record><leader>00000nam a2200000 a 4500</leader><datafield tag="001" ind1=" " ind2=" "/></record>`, "control field tag"},
		{"LongIndicator", `<record><leader>00000nam a2200000 a 4500</leader><datafield tag="245" ind1="10" ind2=" "/></record>`, "ind1"},
		{"LongCode", `<record><leader>00000nam a2200000 a 4500</leader><datafield tag="245" ind1=" " ind2=" "><subfield code="ab">x</subfield></datafield></record>`, "subfield code"},
		{"TooBig", `<record><leader>00000nam a2200000 a 4500</leader>` + strings.Repeat(`<datafield tag="520" ind1=" " ind2=" "><subfield code="a">`+strings.Repeat("x", 9000)+`</subfield></datafield>`, 12) + `</record>`, "over the ISO 2709 limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "<collection>\n" + good("a") + "\n" + tt.bad + "\n" + good("b") + "\n</collection>"
			recs, bad := readAll(t, marc.NewXMLReader(strings.NewReader(doc)))
			if len(recs) != 2 || recs[0].ControlField("001") != "a" || recs[1].ControlField("001") != "b" {
				t.Fatalf("good records not read: %d", len(recs))
			}
			if len(bad) != 1 {
				t.Fatalf("got %d errors, want 1", len(bad))
			}
			wantOff := int64(strings.Index(doc, tt.bad))
			if bad[0].Index != 1 || bad[0].Offset != wantOff || !strings.Contains(bad[0].Reason, tt.reason) {
				t.Errorf("got %+v, want index 1, offset %d, reason containing %q", *bad[0], wantOff, tt.reason)
			}
		})
	}
}

func TestXMLReaderBrokenXML(t *testing.T) {
	doc := `<collection><record><leader>00000nam a2200000 a 4500</leader></record><record><leader>oops</collection>`
	r := marc.NewXMLReader(strings.NewReader(doc))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := r.Next()
		var re *marc.RecordError
		if err == nil || errors.Is(err, io.EOF) || errors.As(err, &re) {
			t.Fatalf("got %v, want a (sticky) error that is not a RecordError", err)
		}
	}
}

func TestXMLReaderTooLarge(t *testing.T) {
	doc := `<collection><record><leader>00000nam a2200000 a 4500</leader></record>` +
		`<record><leader>00000nam a2200000 a 4500</leader><datafield tag="500" ind1=" " ind2=" "><subfield code="a">` +
		strings.Repeat("x", marc.MaxXMLRecordLen) + `</subfield></datafield></record></collection>`
	r := marc.NewXMLReader(strings.NewReader(doc))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := r.Next()
	var re *marc.RecordError
	if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "longer than 8 MB") {
		t.Fatalf("got %v, want the stream to end with a size error", err)
	}
}

func TestXMLWriterEmptyCollection(t *testing.T) {
	doc := writeXML(t, nil)
	if !bytes.Contains(doc, []byte(`<collection xmlns="http://www.loc.gov/MARC21/slim">`)) {
		t.Errorf("no collection in %q", doc)
	}
	recs, bad := readAll(t, marc.NewXMLReader(bytes.NewReader(doc)))
	if len(recs)+len(bad) != 0 {
		t.Errorf("empty collection read as %d records", len(recs))
	}
	var buf bytes.Buffer
	w := marc.NewXMLWriter(&buf)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(mustReadFile(t, "sandburg-1.xml")[0]); err == nil {
		t.Error("Write after Close succeeded")
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		in   string
		want marc.Format
	}{
		{"00561nam  2200205 a 4500", marc.FormatISO2709},
		{"<?xml version=\"1.0\"?><collection/>", marc.FormatMARCXML},
		{"\xef\xbb\xbf\n  <record/>", marc.FormatMARCXML},
		{"\n00561", marc.FormatISO2709},
		{"0056", marc.FormatUnknown},
		{"", marc.FormatUnknown},
		{"LDR 00561nam", marc.FormatUnknown},
	}
	for _, tt := range tests {
		if got := marc.Detect([]byte(tt.in)); got != tt.want {
			t.Errorf("Detect(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestNewAutoReaderErrors(t *testing.T) {
	for _, in := range []string{"", "  \n", "LDR 00561nam  2200205 a 4500"} {
		if _, err := marc.NewAutoReader(strings.NewReader(in)); err == nil {
			t.Errorf("NewAutoReader(%q) succeeded", in)
		}
	}
}

func TestFromXMLReadsToXML(t *testing.T) {
	rec := &marc.Record{Leader: "00000nam a2200000 a 4500", Fields: []marc.Field{
		{Tag: "001", Value: "ocm1"},
		{Tag: "245", Ind1: '0', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: "Dune"}}},
	}}
	s, err := marc.ToXML(rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := marc.FromXML(s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Fields, rec.Fields) {
		t.Fatalf("FromXML(ToXML(rec)) fields = %+v, want %+v", got.Fields, rec.Fields)
	}
	if _, err := marc.FromXML("<record"); err == nil {
		t.Fatal("FromXML read a broken record without an error")
	}
}
