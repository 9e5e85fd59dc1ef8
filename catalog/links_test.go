package catalog_test

import (
	"reflect"
	"testing"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
)

// TestLinks: each 856 $u is a Link, in the record's order, reading $y, else
// $3, else $z, else the URL; only absolute http and https URLs with a host are
// web links.
func TestLinks(t *testing.T) {
	f := func(subs ...string) marc.Field {
		fl := marc.Field{Tag: "856", Ind1: '4', Ind2: '0'}
		for i := 0; i+1 < len(subs); i += 2 {
			fl.Subfields = append(fl.Subfields, marc.Subfield{Code: subs[i][0], Value: subs[i+1]})
		}
		return fl
	}
	rec := &marc.Record{Leader: "00000nam a2200000 i 4500", Fields: []marc.Field{
		{Tag: "245", Ind1: '1', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: "A title"}}},
		f("u", "https://example.org/a", "y", "Read online", "z", "Members only"),
		f("3", "Sample chapter", "u", "HTTP://EXAMPLE.ORG/b", "u", " http://mirror.example.org/b "),
		f("u", "https://example.org/c", "z", "Audio edition"),
		f("u", "https://example.org/d"),
		f("u", "javascript:alert(1)", "y", "Click"),
		f("u", "http:no-host"),
		f("u", "/relative/path"),
		f("z", "No URL at all"),
	}}
	src, err := marc.ToXML(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := []catalog.Link{
		{URL: "https://example.org/a", Text: "Read online", Note: "Members only", Web: true},
		{URL: "HTTP://EXAMPLE.ORG/b", Text: "Sample chapter", Web: true},
		{URL: "http://mirror.example.org/b", Text: "Sample chapter", Web: true},
		{URL: "https://example.org/c", Text: "Audio edition", Web: true},
		{URL: "https://example.org/d", Text: "https://example.org/d", Web: true},
		{URL: "javascript:alert(1)", Text: "Click"},
		{URL: "http:no-host", Text: "http:no-host"},
		{URL: "/relative/path", Text: "/relative/path"},
	}
	if got := catalog.Links(src); !reflect.DeepEqual(got, want) {
		t.Errorf("Links:\n got %+v\nwant %+v", got, want)
	}
	// The record's page reads the MARC once for its links and its lines.
	v := catalog.ViewMARC(src)
	if !reflect.DeepEqual(v.Links, want) || len(v.Lines) != len(rec.Fields)+1 || v.Lines[1] != "245 10 $a A title" {
		t.Errorf("ViewMARC: links %+v, lines %q", v.Links, v.Lines)
	}
	// A record without an 856 has no links, though its page has its lines.
	plain, err := marc.ToXML(&marc.Record{Leader: rec.Leader, Fields: rec.Fields[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if got := catalog.Links(plain); got != nil {
		t.Errorf("Links of a record without 856 = %+v, want none", got)
	}
	if v := catalog.ViewMARC(plain); v.Links != nil || len(v.Lines) != 2 {
		t.Errorf("ViewMARC of a record without 856: links %+v, lines %q", v.Links, v.Lines)
	}
	for _, src := range []string{"", "not MARCXML"} {
		if v := catalog.ViewMARC(src); v.Links != nil || v.Lines != nil {
			t.Errorf("ViewMARC(%q) = %+v, want nothing", src, v)
		}
		if got := catalog.Links(src); got != nil {
			t.Errorf("Links(%q) = %+v, want none", src, got)
		}
	}
}
