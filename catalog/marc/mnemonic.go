package marc

import (
	"fmt"
	"strings"
)

// The mnemonic line syntax is how cataloguers read and type MARC (MarcEdit's
// .mrk): one line a field, "=TAG" and two spaces, then for a control field its
// value, for a data field two indicators and the subfields, each "$" and its code.
//
//	=LDR  00000nam\\2200000\a\4500
//	=001  ocm123
//	=008  850701s1985\\\\nyu\\\\\\\\\\\00010\eng\\
//	=245  10$aTitle :$bsubtitle /$cby X.
//
// A blank in the leader, a control field or an indicator is written "\", as
// MarcEdit does (a space is read as a blank too). Characters the syntax uses
// are written as mnemonics in braces: "{dollar}" for "$" in a subfield,
// "{bsol}" for "\" in the leader or a control field, "{lcub}" for a "{" that
// would otherwise start a mnemonic, and "{tab}", "{lf}", "{cr}" for the line
// breaks and tabs a value may hold. FormatText(r) parses back to r, and
// FormatText(ParseText(x)) == x for every x FormatText wrote.

// mnemonics maps each mnemonic to the character it stands for.
var mnemonics = []struct{ name, char string }{
	{"{dollar}", "$"}, {"{bsol}", `\`}, {"{lcub}", "{"}, {"{tab}", "\t"}, {"{lf}", "\n"}, {"{cr}", "\r"},
}

// startsMnemonic reports whether s starts with one of the mnemonics.
func startsMnemonic(s string) bool {
	for _, m := range mnemonics {
		if strings.HasPrefix(s, m.name) {
			return true
		}
	}
	return false
}

// escape writes v for a line: in a control field (blanks) a space is "\" and a
// backslash "{bsol}"; "$" is "{dollar}" everywhere.
func escape(b *strings.Builder, v string, blanks bool) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '$':
			b.WriteString("{dollar}")
		case c == '\\' && blanks:
			b.WriteString("{bsol}")
		case c == ' ' && blanks:
			b.WriteByte('\\')
		case c == '{' && startsMnemonic(v[i:]):
			b.WriteString("{lcub}")
		case c == '\t':
			b.WriteString("{tab}")
		case c == '\n':
			b.WriteString("{lf}")
		case c == '\r':
			b.WriteString("{cr}")
		default:
			b.WriteByte(c)
		}
	}
}

// unescape reads a value escape wrote; with blanks, "\" is a space.
func unescape(s string, blanks bool) string {
	if !strings.ContainsAny(s, `{\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && blanks {
			b.WriteByte(' ')
			continue
		}
		if c == '{' {
			matched := false
			for _, m := range mnemonics {
				if strings.HasPrefix(s[i:], m.name) {
					b.WriteString(m.char)
					i += len(m.name) - 1
					matched = true
					break
				}
			}
			if matched {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// FormatField writes one field as a line of the mnemonic syntax, without the
// line break.
func FormatField(f Field) string {
	var b strings.Builder
	b.WriteString("=" + f.Tag + "  ")
	if f.IsControl() {
		escape(&b, f.Value, true)
		return b.String()
	}
	for _, ind := range []byte{f.Ind1, f.Ind2} {
		if ind == ' ' || ind == 0 {
			b.WriteByte('\\')
		} else {
			b.WriteByte(ind)
		}
	}
	for _, s := range f.Subfields {
		b.WriteByte('$')
		b.WriteByte(s.Code)
		escape(&b, s.Value, false)
	}
	return b.String()
}

// FormatLeader writes the leader's line.
func FormatLeader(leader string) string {
	var b strings.Builder
	b.WriteString("=LDR  ")
	escape(&b, leader, true)
	return b.String()
}

// FormatText writes r in the mnemonic syntax, a line a field, the leader first,
// each line ending in "\n".
func FormatText(r *Record) string {
	var b strings.Builder
	for _, l := range FormatLines(r) {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// FormatLines writes r in the mnemonic syntax as FormatText does, one string a
// line without its line break: the leader's line, then a line a field. A nil
// record has no lines.
func FormatLines(r *Record) []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.Fields)+1)
	out = append(out, FormatLeader(r.Leader))
	for _, f := range r.Fields {
		out = append(out, FormatField(f))
	}
	return out
}

// LineError is what is wrong with one line of a record in the mnemonic syntax.
type LineError struct {
	Line   int    // 1-based line number
	Text   string // the line as typed
	Reason string // what is wrong, for a cataloguer to read
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// ParseText reads a record in the mnemonic syntax. Blank lines are skipped; a
// browser's CR LF line ends are read as LF. Every line's faults are reported
// (one LineError a line, with its number), and the record is returned only when
// there are none. The record passes Validate.
func ParseText(s string) (*Record, []LineError) {
	var errs []LineError
	rec := &Record{}
	leaders := 0
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		fail := func(format string, args ...any) {
			errs = append(errs, LineError{Line: i + 1, Text: line, Reason: fmt.Sprintf(format, args...)})
		}
		if line[0] != '=' || len(line) < 4 {
			fail(`A line starts with "=" and the field's three-character tag, such as "=245  10$aTitle".`)
			continue
		}
		tag, rest := line[1:4], line[4:]
		// Two spaces follow the tag; one is forgiven.
		if strings.HasPrefix(rest, "  ") {
			rest = rest[2:]
		} else {
			rest = strings.TrimPrefix(rest, " ")
		}
		if tag == "LDR" {
			leaders++
			if leaders > 1 {
				fail("The record has a second leader; keep one =LDR line.")
				continue
			}
			leader := unescape(rest, true)
			if len(leader) != 24 {
				fail("The leader is %d characters long; it must be 24 (write a blank as \\).", len(leader))
				continue
			}
			if err := checkText(leader, false); err != "" {
				fail("The leader %s.", err)
				continue
			}
			rec.Leader = leader
			continue
		}
		if !validTag(tag) {
			fail("The tag %q is not three digits (or letters).", tag)
			continue
		}
		if IsControlTag(tag) {
			v := unescape(rest, true)
			if strings.Contains(rest, "$") {
				fail("Control field %s has no indicators or subfields: type its value after the tag, without \"$\" (write a dollar sign as {dollar}).", tag)
				continue
			}
			if err := checkText(v, true); err != "" {
				fail("Field %s %s.", tag, err)
				continue
			}
			rec.Fields = append(rec.Fields, Field{Tag: tag, Value: v})
			continue
		}
		if len(rest) < 2 {
			fail("Field %s needs two indicators (\\ for a blank) and then its subfields, such as \"=%s  \\\\$a...\".", tag, tag)
			continue
		}
		f := Field{Tag: tag, Ind1: blank(rest[0]), Ind2: blank(rest[1])}
		if !indicator(f.Ind1) || !indicator(f.Ind2) {
			fail("Field %s's indicators %q must each be a digit, a lower-case letter or \\ for a blank.", tag, rest[:2])
			continue
		}
		rest = rest[2:]
		if !strings.HasPrefix(rest, "$") {
			fail("Field %s's subfields start with \"$\" and the subfield code right after the indicators, such as \"$a\".", tag)
			continue
		}
		bad := ""
		for _, part := range strings.Split(rest[1:], "$") {
			if part == "" {
				bad = "has a \"$\" without a subfield code (write a dollar sign as {dollar})"
				break
			}
			code := part[0]
			if !('a' <= code && code <= 'z' || '0' <= code && code <= '9') {
				bad = fmt.Sprintf("has a subfield code %q: a code is a lower-case letter or a digit", string(code))
				break
			}
			v := unescape(part[1:], false)
			if err := checkText(v, true); err != "" {
				bad = fmt.Sprintf("$%c %s", code, err)
				break
			}
			f.Subfields = append(f.Subfields, Subfield{Code: code, Value: v})
		}
		if bad != "" {
			fail("Field %s %s.", tag, bad)
			continue
		}
		rec.Fields = append(rec.Fields, f)
	}
	if leaders == 0 {
		errs = append(errs, LineError{Line: 1, Reason: "The record has no leader: its first line is =LDR and the 24 characters of the leader."})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return rec, nil
}

// blank reads an indicator: "\" and a space are both a blank.
func blank(c byte) byte {
	if c == '\\' {
		return ' '
	}
	return c
}

// indicator reports whether c may be an indicator: a blank, a digit or a
// lower-case letter.
func indicator(c byte) bool {
	return c == ' ' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z'
}

// checkText says what is wrong with a value ("" if nothing): not UTF-8, or a
// character XML cannot carry; the leader (not value) must be printable ASCII.
func checkText(v string, value bool) string {
	if !value {
		for i := 0; i < len(v); i++ {
			if !printable(v[i]) {
				return "holds a character that is not printable ASCII"
			}
		}
		return ""
	}
	if err := checkValue(v); err != nil {
		return strings.TrimPrefix(err.Error(), "value ")
	}
	return ""
}
