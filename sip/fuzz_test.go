package sip_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/sip"
)

// FuzzParse feeds the parser arbitrary bytes, seeded with every request of the
// golden transcripts (real messages, with and without error detection). It must
// never panic, and what it accepts must be consistent: a two-digit identifier, a
// verified checksum, field values without the "|" that ends them. Redact must cope
// with the same input. The seeds run as an ordinary test; make fuzz-short fuzzes.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if req, ok := strings.CutPrefix(line, "> "); ok {
				f.Add([]byte(req))
			}
		}
	}
	f.Add([]byte("9300CNkiosk|COkiosk|CPCEN|AY0AZ"))
	f.Add([]byte("AYAZ0000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := sip.Parse(b)
		sip.Redact(b)
		if m.Seq < -1 || m.Seq > 9 {
			t.Fatalf("Parse(%q): sequence number %d", b, m.Seq)
		}
		if m.Checksum != "" && !m.ChecksumOK && !errors.Is(err, sip.ErrChecksum) {
			t.Fatalf("Parse(%q): a wrong checksum passed (err %v)", b, err)
		}
		if err != nil {
			return
		}
		if len(m.ID) != 2 || m.ID[0] < '0' || m.ID[0] > '9' || m.ID[1] < '0' || m.ID[1] > '9' {
			t.Fatalf("Parse(%q): accepted identifier %q", b, m.ID)
		}
		for _, f := range m.Fields {
			if len(f.ID) != 2 || strings.Contains(f.Value, "|") {
				t.Fatalf("Parse(%q): field %+v", b, f)
			}
		}
	})
}
