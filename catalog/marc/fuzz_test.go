package marc_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// checkRereads asserts that a record a reader returned is valid and comes back
// equal through both writers.
func checkRereads(t *testing.T, rec *marc.Record) {
	t.Helper()
	if err := rec.Validate(); err != nil {
		t.Fatalf("reader returned an invalid record: %v\n%+v", err, rec)
	}
	var buf bytes.Buffer
	if err := marc.WriteISO2709(&buf, rec); err != nil {
		t.Fatalf("WriteISO2709: %v\n%+v", err, rec)
	}
	iso := buf.Bytes()
	again, err := marc.NewReader(bytes.NewReader(iso)).Next()
	if err != nil {
		t.Fatalf("re-reading ISO 2709 %q: %v", iso, err)
	}
	if !reflect.DeepEqual(again, rec) {
		t.Fatalf("ISO 2709 round trip changed the record\n got %+v\nwant %+v", again, rec)
	}
	s, err := marc.ToXML(rec)
	if err != nil {
		t.Fatalf("ToXML: %v", err)
	}
	again, err = marc.NewXMLReader(strings.NewReader(s)).Next()
	if err != nil {
		t.Fatalf("re-reading MARCXML %q: %v", s, err)
	}
	if !reflect.DeepEqual(again, rec) {
		t.Fatalf("MARCXML round trip changed the record\n got %+v\nwant %+v", again, rec)
	}
}

// drain reads r to the end, failing if Next does not finish within limit calls.
func drain(t *testing.T, r marc.RecordReader, size int) {
	t.Helper()
	limit := size + 2
	for range limit {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		var re *marc.RecordError
		if errors.As(err, &re) {
			if re.Reason == "" || re.Offset < 0 || re.Offset > int64(size) {
				t.Fatalf("RecordError without reason or position: %+v", *re)
			}
			continue
		}
		if err != nil {
			// Only broken XML ends a stream early; it must stay ended.
			if _, err2 := r.Next(); err2 == nil {
				t.Fatalf("Next returned a record after %v", err)
			}
			return
		}
		checkRereads(t, rec)
	}
	t.Fatalf("Next did not reach the end within %d calls", limit)
}

func FuzzReadISO2709(f *testing.F) {
	for _, name := range []string{"microlif.001", "specials.001", "zebra-sample.mrc"} {
		data := readFile(f, name)
		f.Add(data)
		// The first record alone: small inputs mutate and minimize much faster.
		n, _ := strconv.Atoi(string(data[:5]))
		f.Add(data[:n])
	}
	f.Add([]byte("00030nam a2200025 a 45000010\x1d"))
	f.Add([]byte("\x1d\x1d\x00junk00026nam a2200025 a 4500\x1e\x1d"))
	f.Add(buildISO(marc8Leader, rawField{"245", "10\x1fa\xe2ecole \x1b(Nxyz\x1b(B\xe8\x1fb\xa5"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each call to Next consumes at least one byte.
		drain(t, marc.NewReader(bytes.NewReader(data)), len(data))
	})
}

func FuzzReadXML(f *testing.F) {
	f.Add(readFile(f, "sandburg-1.xml"))
	f.Add([]byte(`<marc:record xmlns:marc="http://www.loc.gov/MARC21/slim"><marc:leader>00000nam a2200000 a 4500</marc:leader>` +
		`<marc:controlfield tag="001">a&#xD;b</marc:controlfield><marc:datafield tag="245" ind1="1" ind2=" ">` +
		`<marc:subfield code="a">x&amp;y</marc:subfield></marc:datafield></marc:record>`))
	f.Add([]byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><collection><record><leader>00000nam a2200000 a 4500</leader>" +
		"<datafield tag=\"500\"><subfield code=\"a\">caf\xe9</subfield></datafield></record><record/></collection>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each record needs at least "<record/>", so the input bounds the calls.
		drain(t, marc.NewXMLReader(bytes.NewReader(data)), len(data))
	})
}
