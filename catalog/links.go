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
// has none. It reads only the links: the patrons' record page shows no MARC
// lines, so it does not build them as ViewMARC does.
func Links(source string) []Link {
	if source == "" {
		return nil
	}
	rec, err := marc.FromXML(source)
	if err != nil {
		return nil
	}
	return linksOf(rec)
}

// MARCView is what a record's page shows of its kept MARCXML, read once: its
// links (856) and its lines as cataloguers read them.
type MARCView struct {
	Links []Link
	Lines []string
}

// ViewMARC reads a record's kept MARCXML for its page. A record without kept
// MARC, or one that cannot be read, has neither links nor lines.
func ViewMARC(source string) MARCView {
	if source == "" {
		return MARCView{}
	}
	rec, err := marc.FromXML(source)
	if err != nil {
		return MARCView{}
	}
	return MARCView{Links: linksOf(rec), Lines: linesOf(rec)}
}

// linksOf reads rec's 856 fields, one Link per $u, in the record's order.
func linksOf(rec *marc.Record) []Link {
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
