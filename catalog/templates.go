package catalog

import (
	"strings"
	"time"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// Template is a starting point for a new record in the MARC editor.
type Template struct {
	Code, Name string
	// leader and f008 (without its first six characters, the date entered)
	// are the type of record's; the fields follow, in the mnemonic syntax.
	leader, f008 string
	fields       []string
}

// rda33X are the RDA content, media and carrier type fields.
func rda33X(content, contentCode, media, mediaCode, carrier, carrierCode string) []string {
	return []string{
		`=336  \\$a` + content + `$b` + contentCode + `$2rdacontent`,
		`=337  \\$a` + media + `$b` + mediaCode + `$2rdamedia`,
		`=338  \\$a` + carrier + `$b` + carrierCode + `$2rdacarrier`,
	}
}

// templates are the kinds of record a library adds most. Each leader and 008
// are MARC 21's for the type: language material (a), projected medium (g),
// nonmusical sound recording (i), language material serial (s); 008/06-39 for
// books, visual materials, music and continuing resources, with "xx" (no
// place) and English for the cataloguer to correct; the 007 of a DVD and of an
// audio CD; the RDA 336/337/338 of each. The 245 $a is left for the
// cataloguer: a record is not saved without a title.
var templates = []Template{
	{Code: "book", Name: "Book", leader: "00000nam a2200000 i 4500",
		f008:   "s    " + "    " + "xx " + "    " + "  " + "    " + " 000 0 " + "eng d",
		fields: append([]string{`=020  \\$a`, `=100  1\$a`, `=245  10$a`, `=264  \1$a$b$c`, `=300  \\$apages ;$ccm`}, rda33X("text", "txt", "unmediated", "n", "volume", "nc")...)},
	{Code: "dvd", Name: "DVD (video)", leader: "00000ngm a2200000 i 4500",
		f008:   "s    " + "    " + "xx " + "---" + " " + " " + "     " + " " + " " + "   " + "vl" + "eng d",
		fields: append([]string{`=007  vd{bsol}cvaizq`, `=245  00$a`, `=257  \\$a`, `=264  \1$a$b$c`, `=300  \\$a1 videodisc (minutes) :$bsound, color ;$c4 3/4 in.`}, rda33X("two-dimensional moving image", "tdi", "video", "v", "videodisc", "vd")...)},
	{Code: "audiobook", Name: "Audiobook (CD)", leader: "00000nim a2200000 i 4500",
		f008:   "s    " + "    " + "xx " + "nn" + "n" + " " + " " + " " + "      " + "  " + " " + "n" + " " + "eng d",
		fields: append([]string{`=007  sd{bsol}fsngnnmmned`, `=020  \\$a`, `=100  1\$a`, `=245  10$a`, `=264  \1$a$b$c`, `=300  \\$aaudio discs (hours) :$bdigital ;$c4 3/4 in.`}, rda33X("spoken word", "spw", "audio", "s", "audio disc", "sd")...)},
	{Code: "serial", Name: "Serial (magazine, journal)", leader: "00000nas a2200000 i 4500",
		f008:   "c    " + "9999" + "xx " + "u" + "u" + " " + "p" + " " + " " + " " + "   " + " " + "0" + "   " + " " + "0" + "eng d",
		fields: append([]string{`=022  \\$a`, `=245  00$a`, `=264  \1$a$b$c`, `=310  \\$a`, `=362  0\$a`}, rda33X("text", "txt", "unmediated", "n", "volume", "nc")...)},
	{Code: "scratch", Name: "From scratch", leader: "00000nam a2200000 i 4500", fields: []string{`=245  00$a`}},
}

// Templates lists the templates for new records.
func Templates() []Template { return templates }

// TemplateText is the MARC editor's text of template code for a record made
// on the day of today (008/00-05), and whether there is such a template.
func TemplateText(code string, today time.Time) (string, bool) {
	for _, t := range templates {
		if t.Code != code {
			continue
		}
		lines := []string{marc.FormatLeader(t.leader)}
		if t.f008 != "" {
			lines = append(lines, marc.FormatField(marc.Field{Tag: "008", Value: today.Format("060102") + t.f008}))
		}
		lines = append(lines, t.fields...)
		return strings.Join(lines, "\n") + "\n", true
	}
	return "", false
}
