package sip_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stacks-ils/stacks/sip"
)

// FuzzParse feeds the parser arbitrary bytes, seeded with every request of the
// golden transcripts (real messages, with and without error detection) and with
// invalid UTF-8. It must never panic, and what it accepts must be
// consistent: a two-digit identifier, a verified checksum, field values without the
// "|" that ends them. Redact must cope with the same input, and MessageLabel must
// give a label that is text and one of the messages Parse knows, or "other". The
// seeds run as an ordinary test; make fuzz-short fuzzes.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		f.Fatal(err)
	}
	clients, err := filepath.Glob("testdata/*/*.txt")
	if err != nil {
		f.Fatal(err)
	}
	files = append(files, clients...)
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
	// Empty fields and bars around the error detection fields, as terminals send.
	for _, s := range []string{"9900002.00|", "9900002.00|AY1AZFC2C", "9900302.00AY1|AZFBB0|", "1720261130    100000AOCEN||ABI00001||",
		"2300120261130|AOCEN|", "9300CNkiosk|C", "||||", "99|||||||||AY1|AZ0000|"} {
		f.Add([]byte(s))
	}
	// Invalid UTF-8: in the identifier (it became a metrics label, which panicked),
	// alone, with error detection, and in the fields of known messages.
	for _, s := range []string{"9\xC3", "9\xC3\r", "\xC3", "\xC3\x28", "\xff\xfe", "\x80\x80", "\xed\xa0\x80",
		"9\xC3AY0AZFFFF", "93\xff", "9300CN\xff|CO\xC3|CP\x80|", "2300120261130    100000AOCEN|AA\xff\xfe|AC|AD\xC3|"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := sip.Parse(b)
		sip.Redact(b)
		label := sip.MessageLabel(b)
		if label != sip.OtherMessage {
			if !utf8.ValidString(label) || len(label) != 2 || label != string(b[:2]) {
				t.Fatalf("MessageLabel(%q) = %q", b, label)
			}
			if errors.Is(err, sip.ErrUnknown) {
				t.Fatalf("MessageLabel(%q) = %q, a message Parse does not know", b, label)
			}
		}
		if m.Seq < -1 || m.Seq > 999 {
			t.Fatalf("Parse(%q): sequence number %d", b, m.Seq)
		}
		if m.Checksum != "" && !m.ChecksumOK && !errors.Is(err, sip.ErrChecksum) {
			t.Fatalf("Parse(%q): a wrong checksum passed (err %v)", b, err)
		}
		if err != nil {
			return
		}
		if label != m.ID {
			t.Fatalf("Parse(%q) accepted %q, MessageLabel says %q", b, m.ID, label)
		}
		if len(m.ID) != 2 || m.ID[0] < '0' || m.ID[0] > '9' || m.ID[1] < '0' || m.ID[1] > '9' {
			t.Fatalf("Parse(%q): accepted identifier %q", b, m.ID)
		}
		for _, f := range m.Fields {
			if len(f.ID) != 2 || strings.Contains(f.Value, "|") {
				t.Fatalf("Parse(%q): field %+v", b, f)
			}
		}
		// A "|" more at the end changes nothing: terminals end messages with one
		// or not, after the checksum too.
		if last := b[len(b)-1]; last != '\r' && last != '\n' {
			m2, err := sip.Parse(append(slices.Clip(b), '|'))
			if err != nil || !reflect.DeepEqual(m, m2) {
				t.Fatalf("Parse(%q) = %+v, but with a \"|\" more: %+v, %v", b, m, m2, err)
			}
		}
	})
}
