package catalog

import (
	"net/url"
	"strings"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// Link is an electronic resource a record points to: one URL of a MARC 856
// field ($u) and what to show for it.
type Link struct {
	URL string
	// Text is what the link reads: the field's link text ($y), else the
	// materials it covers ($3), else its public note ($z), else the URL.
	Text string
	// Note is the public note ($z) when it is not the Text already.
	Note string
	// Web is set for an http or https URL with a host: only those are shown
	// as links; any other (a file: or javascript: one, a bare path) is shown as
	// text.
	Web bool
}

// Links reads the 856 fields of a record's kept MARCXML, one Link per $u, in
// the record's order. A record without kept MARC, or one that cannot be read,
// has none.
func Links(source string) []Link {
	if source == "" {
		return nil
	}
	rec, err := marc.FromXML(source)
	if err != nil {
		return nil
	}
	var out []Link
	for _, f := range rec.Fields {
		if f.Tag != "856" {
			continue
		}
		y, materials, note := strings.TrimSpace(f.Sub('y')), strings.TrimSpace(f.Sub('3')), strings.TrimSpace(f.Sub('z'))
		for _, u := range f.Subs('u') {
			u = strings.TrimSpace(u)
			if u == "" {
				continue
			}
			l := Link{URL: u, Web: isWebURL(u)}
			switch {
			case y != "":
				l.Text, l.Note = y, note
			case materials != "":
				l.Text, l.Note = materials, note
			case note != "":
				l.Text = note
			default:
				l.Text = u
			}
			out = append(out, l)
		}
	}
	return out
}

// isWebURL reports whether u is an absolute http or https URL with a host.
func isWebURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return false
	}
	s := strings.ToLower(p.Scheme)
	return s == "http" || s == "https"
}
