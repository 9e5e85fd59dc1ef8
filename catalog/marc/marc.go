// Package marc reads and writes MARC 21 bibliographic records, the format other
// library systems export and the catalog imports: ISO 2709 ("binary MARC", UTF-8 or
// MARC-8) and MARCXML.
//
// Every record a reader returns is in one normal form, whatever it came from:
// values are UTF-8 (MARC-8 is converted), characters XML cannot carry are replaced
// by U+FFFD, and the leader describes the record as WriteISO2709 would encode it
// (record length, base address, leader/09 'a', "22" and "4500" recomputed). That is
// what lets a record go ISO 2709 -> MARCXML -> ISO 2709 and come back equal.
//
// Readers never stop a whole file for one bad record: a malformed record comes
// back as a *RecordError and the next call to Next moves on to the following
// record. Any other error (an I/O error, broken XML) ends the stream.
package marc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Record is one MARC record: a 24-character leader and its fields in order.
type Record struct {
	Leader string
	Fields []Field
}

// Field is a control field (tags 001-009, IsControl) holding Value, or a data field
// holding two indicators and subfields. The other part is left zero.
type Field struct {
	Tag       string
	Value     string
	Ind1      byte
	Ind2      byte
	Subfields []Subfield
}

// Subfield is one coded piece of a data field, such as 245 $a.
type Subfield struct {
	Code  byte
	Value string
}

// IsControlTag reports whether tag names a control field: MARC 21 control fields
// are 001-009 (and the obsolete 000), the tags that start with "00".
func IsControlTag(tag string) bool {
	return len(tag) == 3 && tag[0] == '0' && tag[1] == '0'
}

// IsControl reports whether f is a control field, which carries Value rather than
// indicators and subfields.
func (f Field) IsControl() bool { return IsControlTag(f.Tag) }

// Sub returns the value of the first subfield with code, or "" if there is none.
func (f Field) Sub(code byte) string {
	for _, s := range f.Subfields {
		if s.Code == code {
			return s.Value
		}
	}
	return ""
}

// Subs returns the values of every subfield with code, in order; repeatable
// subfields such as 650 $x need all of them.
func (f Field) Subs(code byte) []string {
	var out []string
	for _, s := range f.Subfields {
		if s.Code == code {
			out = append(out, s.Value)
		}
	}
	return out
}

// ControlField returns the value of the first field with tag, or "" if the record
// has none. Meant for 001, 003, 005 and 008.
func (r *Record) ControlField(tag string) string {
	for _, f := range r.Fields {
		if f.Tag == tag {
			return f.Value
		}
	}
	return ""
}

// FieldsByTag returns every field with tag, in record order (nil if none).
func (r *Record) FieldsByTag(tag string) []Field {
	var out []Field
	for _, f := range r.Fields {
		if f.Tag == tag {
			out = append(out, f)
		}
	}
	return out
}

// RecordError reports one malformed record. The reader that returned it has
// already moved past that record, so the caller can log it and call Next again.
type RecordError struct {
	Index  int    // 0-based position of the record in the input, counting bad ones
	Offset int64  // byte offset in the input where the record starts
	Reason string // what is wrong, for a person to read
}

// Error says which record, where, and what is wrong with it.
func (e *RecordError) Error() string {
	return fmt.Sprintf("marc: record %d at byte %d: %s", e.Index, e.Offset, e.Reason)
}

// RecordReader is what both readers offer: Next returns the next record, a
// *RecordError for a bad record (call Next again), io.EOF at the end, or another
// error that ends the stream.
type RecordReader interface {
	Next() (*Record, error)
}

// Format is a serialization of MARC records.
type Format int

// The formats Detect can tell apart.
const (
	FormatUnknown Format = iota
	FormatISO2709
	FormatMARCXML
)

// Detect tells ISO 2709 from MARCXML by the first bytes of the input: XML starts
// with '<' (after an optional byte order mark and white space), ISO 2709 with the
// five-digit record length.
func Detect(prefix []byte) Format {
	p := bytes.TrimPrefix(prefix, []byte("\xef\xbb\xbf"))
	p = bytes.TrimLeft(p, " \t\r\n")
	if len(p) == 0 {
		return FormatUnknown
	}
	if p[0] == '<' {
		return FormatMARCXML
	}
	if len(p) >= 5 && allDigits(p[:5]) {
		return FormatISO2709
	}
	return FormatUnknown
}

// NewAutoReader sniffs the start of r and returns the matching reader. It fails
// only when the input is empty or looks like neither format.
func NewAutoReader(r io.Reader) (RecordReader, error) {
	br := bufio.NewReaderSize(r, 4096)
	prefix, err := br.Peek(512)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("marc: reading the start of the input: %w", err)
	}
	switch Detect(prefix) {
	case FormatISO2709:
		return NewReader(br), nil
	case FormatMARCXML:
		return NewXMLReader(br), nil
	}
	if len(bytes.TrimSpace(prefix)) == 0 {
		return nil, errors.New("marc: the input is empty; expected ISO 2709 or MARCXML records")
	}
	if len(prefix) > 20 {
		prefix = prefix[:20]
	}
	return nil, fmt.Errorf("marc: the input starts with %q, which is neither ISO 2709 (five digits) nor MARCXML ('<')", prefix)
}

// Validate reports the first reason r cannot be written: a leader that is not 24
// printable ASCII characters, a tag that is not three letters or digits, an
// indicator or subfield code that is not printable ASCII, or a value that is not
// UTF-8 or holds a character XML 1.0 forbids (which includes the ISO 2709
// delimiters 0x1D-0x1F). Records from this package's readers always pass.
func (r *Record) Validate() error {
	if len(r.Leader) != 24 {
		return fmt.Errorf("marc: leader is %d bytes, want 24", len(r.Leader))
	}
	for i := 0; i < len(r.Leader); i++ {
		if !printable(r.Leader[i]) {
			return fmt.Errorf("marc: leader byte %d is %#x, want printable ASCII", i, r.Leader[i])
		}
	}
	for i, f := range r.Fields {
		if !validTag(f.Tag) {
			return fmt.Errorf("marc: field %d: tag %q is not three letters or digits", i, f.Tag)
		}
		if f.IsControl() {
			if len(f.Subfields) > 0 {
				return fmt.Errorf("marc: field %d: control field %s has subfields; control fields keep their text in Value", i, f.Tag)
			}
			if err := checkValue(f.Value); err != nil {
				return fmt.Errorf("marc: field %d (%s): %w", i, f.Tag, err)
			}
			continue
		}
		if f.Value != "" {
			return fmt.Errorf("marc: field %d: data field %s has a Value; data fields keep their text in subfields", i, f.Tag)
		}
		if !printable(f.Ind1) || !printable(f.Ind2) {
			return fmt.Errorf("marc: field %d (%s): indicators %q must be printable ASCII", i, f.Tag, []byte{f.Ind1, f.Ind2})
		}
		for _, s := range f.Subfields {
			if !printable(s.Code) {
				return fmt.Errorf("marc: field %d (%s): subfield code %#x must be printable ASCII", i, f.Tag, s.Code)
			}
			if err := checkValue(s.Value); err != nil {
				return fmt.Errorf("marc: field %d (%s $%c): %w", i, f.Tag, s.Code, err)
			}
		}
	}
	return nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func printable(c byte) bool { return c >= 0x20 && c <= 0x7e }

func validTag(tag string) bool {
	if len(tag) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		c := tag[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// xmlChar reports whether XML 1.0 allows c in text.
func xmlChar(c rune) bool {
	if c < 0x20 {
		return c == '\t' || c == '\n' || c == '\r'
	}
	return c != 0xfffe && c != 0xffff
}

func checkValue(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("value is not valid UTF-8")
	}
	for _, c := range s {
		if !xmlChar(c) {
			return fmt.Errorf("value holds %U, which MARC and XML cannot carry", c)
		}
	}
	return nil
}

// Clean makes every value of r valid UTF-8 without the characters XML forbids
// (U+FFFE, C0 controls other than tab and newlines, ...), in place, each bad
// byte or character replaced with U+FFFD, so that r can be written as MARCXML
// whatever its values held.
func (r *Record) Clean() {
	for i := range r.Fields {
		f := &r.Fields[i]
		f.Value = clean(f.Value)
		for j := range f.Subfields {
			f.Subfields[j].Value = clean(f.Subfields[j].Value)
		}
	}
}

// clean makes s valid UTF-8 without characters XML forbids, replacing each bad
// byte or character with U+FFFD. Readers apply it to every value.
func clean(s string) string {
	if checkValue(s) == nil {
		return s
	}
	return strings.Map(func(c rune) rune {
		if !xmlChar(c) {
			return utf8.RuneError
		}
		return c
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
