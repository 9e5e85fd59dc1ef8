package catalog

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// Bib is what the catalogue keeps of a MARC record besides the record itself.
type Bib struct {
	Title         string
	Author        string
	ISBN          string
	Publisher     string
	Year          int
	Subjects      []string
	ControlNumber string
}

// trimPunct removes the ISBD punctuation MARC puts at the end of subfields
// ("Le Guin, Ursula K.," "Ace Books," "The left hand of darkness /").
func trimPunct(s string) string {
	s = strings.TrimSpace(s)
	for len(s) > 0 {
		last := s[len(s)-1]
		if strings.IndexByte("/:;,=", last) >= 0 {
			s = strings.TrimSpace(s[:len(s)-1])
			continue
		}
		// A final period, unless it ends an initial or an abbreviation ("K.", "Inc.").
		if last == '.' && len(s) > 3 && !(s[len(s)-3] == ' ' || s[len(s)-3] == '.') && !strings.HasSuffix(s, "Inc.") && !strings.HasSuffix(s, "Co.") && !strings.HasSuffix(s, "Ltd.") && !strings.HasSuffix(s, "etc.") {
			s = strings.TrimSpace(s[:len(s)-1])
			continue
		}
		break
	}
	return s
}

// join joins the non-empty parts with sep.
func join(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// firstField returns the first field with one of the tags, in the order given.
func firstField(r *marc.Record, tags ...string) (marc.Field, bool) {
	for _, tag := range tags {
		if fs := r.FieldsByTag(tag); len(fs) > 0 {
			return fs[0], true
		}
	}
	return marc.Field{}, false
}

// BibOf maps a MARC 21 bibliographic record to the catalogue's fields: 245 title,
// 100/110/111 author, 020 ISBN, 264/260 publisher and year (else 008), 6XX subjects,
// 001 control number.
func BibOf(r *marc.Record) Bib {
	var b Bib
	b.ControlNumber = strings.TrimSpace(r.ControlField("001"))
	if f, ok := firstField(r, "245"); ok {
		// ISBD: "Title : subtitle. Part number, Part name".
		b.Title = trimPunct(join(": ", trimPunct(f.Sub('a')), trimPunct(f.Sub('b'))))
		if part := trimPunct(join(", ", trimPunct(strings.Join(f.Subs('n'), " ")), trimPunct(strings.Join(f.Subs('p'), " ")))); part != "" {
			b.Title = join(". ", b.Title, part)
		}
	}
	if b.Title == "" {
		if f, ok := firstField(r, "130", "240", "246"); ok {
			b.Title = trimPunct(f.Sub('a'))
		}
	}
	if f, ok := firstField(r, "100", "110", "111"); ok {
		b.Author = trimPunct(join(" ", f.Sub('a'), f.Sub('b')))
	} else if f, ok := firstField(r, "700", "710"); ok {
		b.Author = trimPunct(f.Sub('a'))
	}
	for _, f := range r.FieldsByTag("020") {
		if isbn := NormalizeISBN(f.Sub('a')); isbn != "" {
			b.ISBN = isbn
			break
		}
	}
	if i := publicationIndex(r); i >= 0 {
		pub := r.Fields[i]
		b.Publisher = trimPunct(pub.Sub('b'))
		b.Year = firstYear(pub.Sub('c'))
	}
	if b.Year == 0 {
		if f008 := r.ControlField("008"); len(f008) >= 11 {
			b.Year = firstYear(f008[7:11])
		}
	}
	seen := map[string]bool{}
	for _, tag := range subjectTags {
		for _, f := range r.FieldsByTag(tag) {
			if s := subjectOf(f); s != "" && !seen[s] {
				seen[s] = true
				b.Subjects = append(b.Subjects, s)
			}
		}
	}
	return b
}

// publicationIndex returns the index of the field BibOf reads the publisher
// and year from (the first 264 with second indicator 1, else the first 260 or
// 264), or -1.
func publicationIndex(r *marc.Record) int {
	for i, f := range r.Fields {
		if f.Tag == "264" && f.Ind2 == '1' {
			return i
		}
	}
	return slices.IndexFunc(r.Fields, func(f marc.Field) bool { return f.Tag == "260" || f.Tag == "264" })
}

// subjectTags are the fields BibOf reads subjects from, in its order.
var subjectTags = []string{"600", "610", "611", "630", "650", "651", "655"}

// subjectOf is the heading BibOf reads from a subject field: "$a $b" and its
// subdivisions ($v, $x, $y, $z), joined by " -- ".
func subjectOf(f marc.Field) string {
	parts := []string{trimPunct(join(" ", f.Sub('a'), f.Sub('b')))}
	for _, sf := range f.Subfields {
		if sf.Code == 'x' || sf.Code == 'y' || sf.Code == 'z' || sf.Code == 'v' {
			parts = append(parts, trimPunct(sf.Value))
		}
	}
	return join(" -- ", parts...)
}

// firstYear returns the first four-digit year in s ("c1969." gives 1969).
func firstYear(s string) int {
	run := 0
	for i, r := range s {
		if unicode.IsDigit(r) {
			run++
			if run == 4 {
				y, _ := strconv.Atoi(s[i-3 : i+1])
				if y >= 1000 && y <= 2999 {
					return y
				}
			}
		} else {
			run = 0
		}
	}
	return 0
}

// Holding is a copy described in a MARC record's holdings fields.
type Holding struct {
	Barcode    string
	HomeBranch string
	ItemType   string
	CallNumber string
	// Location is the shelving location: Koha's 952 $c, MARC 852 $c.
	Location     string
	PriceCents   int64
	SourceTag    string
	SourceFields string
	// Koha's status subfields of 952, as the file gives them ("" or "0" when
	// not set): $0 withdrawn, $1 lost, $4 damaged, $7 not for loan.
	Withdrawn, Lost, Damaged, NotForLoan string
}

// HoldingsOf reads the copies of a record from Koha's 952 ($p barcode, $a home
// branch, $y item type, $o call number, $c shelving location, $g price), else 852
// ($p barcode, $b branch, $c shelving location, $h $i call number), else 949 ($i barcode, $l branch, $t item type, $a
// call number: a common vendor layout). A 952's status subfields are kept
// (ImportedStatus reads them).
func HoldingsOf(r *marc.Record) []Holding {
	var hs []Holding
	for _, f := range r.FieldsByTag("952") {
		hs = append(hs, Holding{Barcode: f.Sub('p'), HomeBranch: f.Sub('a'), ItemType: f.Sub('y'), CallNumber: f.Sub('o'),
			Location: f.Sub('c'), PriceCents: priceCents(f.Sub('g')), SourceTag: "952",
			Withdrawn: f.Sub('0'), Lost: f.Sub('1'), Damaged: f.Sub('4'), NotForLoan: f.Sub('7')})
	}
	if len(hs) > 0 {
		return hs
	}
	for _, f := range r.FieldsByTag("852") {
		hs = append(hs, Holding{Barcode: f.Sub('p'), HomeBranch: f.Sub('b'), Location: f.Sub('c'),
			CallNumber: join(" ", f.Sub('h'), f.Sub('i')), SourceTag: "852"})
	}
	if len(hs) > 0 {
		return hs
	}
	for _, f := range r.FieldsByTag("949") {
		hs = append(hs, Holding{Barcode: f.Sub('i'), HomeBranch: f.Sub('l'), ItemType: f.Sub('t'), CallNumber: f.Sub('a'), SourceTag: "949"})
	}
	return hs
}

func priceCents(s string) int64 {
	s = strings.TrimFunc(s, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
	whole, frac, _ := strings.Cut(s, ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w < 0 || w > 1_000_000 {
		return 0
	}
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac[:2], 10, 64)
	return w*100 + f
}

// linesOf renders a record as the lines cataloguers read: "LDR ...",
// "001 value", "245 10 $a Title : $b subtitle".
func linesOf(rec *marc.Record) []string {
	lines := []string{"LDR " + rec.Leader}
	for _, f := range rec.Fields {
		if f.IsControl() {
			lines = append(lines, f.Tag+" "+f.Value)
			continue
		}
		var b strings.Builder
		b.WriteString(f.Tag + " " + string([]byte{f.Ind1, f.Ind2}))
		for _, sf := range f.Subfields {
			b.WriteString(" $" + string(sf.Code) + " " + sf.Value)
		}
		lines = append(lines, strings.ReplaceAll(b.String(), "\x00", " "))
	}
	return lines
}

// kohaSet reports whether a Koha status subfield is set: any value but
// nothing or zero.
func kohaSet(v string) bool {
	v = strings.TrimSpace(v)
	return v != "" && strings.Trim(v, "0") != ""
}

// ImportedStatus is the status a copy comes in with from its holding's Koha
// statuses: withdrawn ($0), else lost ($1; Koha's lost value 4 is "missing"),
// else available. The reason is the withdrawal's. Damaged ($4) and not for
// loan ($7) have no item status in Stacks (not for loan belongs to the item
// type here): note says so, for the import's report, and the copy comes in
// available.
func ImportedStatus(h Holding) (status, reason, note string) {
	var notes []string
	if kohaSet(h.Damaged) {
		notes = append(notes, "damaged (952 $4)")
	}
	if kohaSet(h.NotForLoan) {
		notes = append(notes, "not for loan (952 $7)")
	}
	switch {
	case kohaSet(h.Withdrawn):
		return StatusWithdrawn, "withdrawn in the imported record (952 $0 " + strings.TrimSpace(h.Withdrawn) + ")", ""
	case kohaSet(h.Lost):
		if strings.TrimSpace(h.Lost) == "4" {
			return StatusMissing, "", ""
		}
		return StatusLost, "", ""
	}
	if len(notes) > 0 {
		note = strings.Join(notes, " and ") + " has no item status in Stacks: the copy is available"
	}
	return StatusAvailable, "", note
}
