package copycat

import (
	"fmt"
	"testing"
)

// iso builds a one-field ISO 2709 record (245 10 $a title) with leader/09 set to
// coding, its bytes as given.
func iso(coding byte, title string) []byte {
	field := "10\x1fa" + title + "\x1e"
	base := 24 + 12 + 1
	total := base + len(field) + 1
	leader := fmt.Sprintf("%05dnam %c22%05d a 4500", total, coding, base)
	return []byte(leader + fmt.Sprintf("245%04d%05d", len(field), 0) + "\x1e" + field + "\x1d")
}

// A Z39.50 record whose leader does not say UTF-8 is read as UTF-8 when its
// bytes are, else as MARC-8 converted to Unicode: a target needs no setting.
func TestReadZRecordCharsets(t *testing.T) {
	utf8Rec, err := readZRecord(iso(' ', "Caf\u00e9"), Target{Syntax: MARC21})
	if err != nil {
		t.Fatal(err)
	}
	if got := utf8Rec.FieldsByTag("245")[0].Sub('a'); got != "Café" {
		t.Errorf("UTF-8 title under a blank leader/09: %q, want %q", got, "Café")
	}
	// MARC-8 puts the combining acute (0xE2) before its base letter.
	marc8 := iso(' ', "Caf\xe2e")
	rec, err := readZRecord(marc8, Target{Syntax: MARC21})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.FieldsByTag("245")[0].Sub('a'); got != "Café" {
		t.Errorf("MARC-8 title %q, want %q", got, "Café")
	}
}
