package web_test

import (
	"context"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/copycat/yaztest"
	"github.com/stacks-ils/stacks/db"
)

var copycatMARCField = regexp.MustCompile(`name="marc" value="([^"]*)"`)

// firstMARC is the MARCXML the first Import form on a page carries.
func firstMARC(t *testing.T, body string) string {
	t.Helper()
	m := copycatMARCField.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the page has no import form")
	}
	return html.UnescapeString(m[1])
}

func (e *testEnv) recordTitles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT title FROM records ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out = append(out, s)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An administrator lists yaz-ztest (over SRU and Z39.50) and a catalogue that
// never answers; a cataloguer scans an ISBN, sees each target's answer, imports
// a record, is asked before importing it twice, adds it anyway and overlays it.
func TestCopycatFlow(t *testing.T) {
	e := newEnv(t)
	yaz := yaztest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(io.Discard, c) }()
		}
	}()

	admin := e.client(t)
	e.login(t, admin, "admin", "admin")
	mustContain(t, "the empty targets page", e.get(t, admin, "/admin/copycat").Body, "No targets yet")
	bad := e.post(t, admin, "/admin/copycat", url.Values{"name": {"Broken"}, "kind": {"z3950"}, "address": {"example.org"}, "timeout": {"5"}, "enabled": {"1"}})
	if bad.Status != http.StatusUnprocessableEntity || !strings.Contains(bad.Body, "host:port/database") || !strings.Contains(bad.Body, `value="Broken"`) {
		t.Errorf("a bad address: %d, want 422 with the message and the form as typed", bad.Status)
	}
	for _, f := range []url.Values{
		{"name": {"yaz SRU"}, "kind": {"sru"}, "address": {yaz.SRU()}, "syntax": {"MARCXML"}, "timeout": {"20"}, "enabled": {"1"}},
		{"name": {"yaz Z39.50"}, "kind": {"z3950"}, "address": {yaz.Z3950()}, "syntax": {"MARC21"}, "timeout": {"20"}, "enabled": {"1"}},
		{"name": {"Silent library"}, "kind": {"z3950"}, "address": {ln.Addr().String() + "/Books"}, "syntax": {"MARC21"}, "timeout": {"1"}, "enabled": {"1"}},
		{"name": {"Switched off"}, "kind": {"z3950"}, "address": {ln.Addr().String() + "/Other"}, "timeout": {"1"}},
	} {
		if r := e.post(t, admin, "/admin/copycat", f); r.Status != http.StatusSeeOther {
			t.Fatalf("adding %s: %d %s", f.Get("name"), r.Status, r.Body)
		}
	}
	list := e.get(t, admin, "/admin/copycat").Body
	mustContain(t, "the targets page", list, "yaz SRU", "yaz Z39.50", "Silent library", "Disabled", yaz.Z3950())

	desk := e.client(t)
	e.login(t, desk, "desk", "desk")
	if r := e.get(t, desk, "/admin/copycat"); r.Status == http.StatusOK {
		t.Errorf("a circulation account reads the targets page")
	}
	form := e.get(t, desk, "/cataloguing/copy")
	mustContain(t, "the copy cataloguing form", form.Body, `id="q"`, "autofocus")
	if hasInlineScript(form.Body) {
		t.Error("the copy cataloguing page carries inline script")
	}
	if r := e.get(t, desk, "/cataloguing/copy?by=isbn&q=02018968"); r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "10 or 13 digits") {
		t.Errorf("a mistyped ISBN: %d", r.Status)
	}
	// Books are printed with wrong check digits: such an ISBN is searched as
	// printed, with a note.
	if r := e.get(t, desk, "/cataloguing/copy?by=isbn&q=0201896835"); r.Status != http.StatusOK || !strings.Contains(r.Body, "check digit") ||
		!strings.Contains(r.Body, "catalogues searched") || !strings.Contains(r.Body, `<p class="flash warn" role="status">The check digit of ISBN 0201896835 is wrong`) {
		t.Errorf("an ISBN with a wrong check digit: %d", r.Status)
	}

	res := e.get(t, desk, "/cataloguing/copy?by=isbn&q=0-201-89683-4")
	if res.Status != http.StatusOK {
		t.Fatalf("search: %d", res.Status)
	}
	mustContain(t, "the results", res.Body, "3 catalogues searched", "yaz SRU", "yaz Z39.50",
		"Silent library: timed out after 1 s", "How to program a computer", "=245  10$aHow to program a computer")
	if strings.Contains(res.Body, "Switched off") {
		t.Error("a disabled target was searched")
	}

	marcXML := firstMARC(t, res.Body)
	imp := e.post(t, desk, "/cataloguing/copy/import", url.Values{"marc": {marcXML}, "target": {"yaz SRU"}})
	if imp.Status != http.StatusSeeOther || !regexp.MustCompile(`^/records/\d+/items/new$`).MatchString(imp.Location) {
		t.Fatalf("import: %d to %q", imp.Status, imp.Location)
	}
	newItem := e.get(t, desk, imp.Location)
	mustContain(t, "the item form after the import", newItem.Body, "is imported from yaz SRU as a new record", "Scan the barcode of its first copy")
	if got := e.recordTitles(t); len(got) != 1 || got[0] != "How to program a computer" {
		t.Fatalf("records %q", got)
	}
	firstID := strings.TrimSuffix(strings.TrimPrefix(imp.Location, "/records/"), "/items/new")

	again := e.post(t, desk, "/cataloguing/copy/import", url.Values{"marc": {marcXML}, "target": {"yaz SRU"}})
	if again.Status != http.StatusOK {
		t.Fatalf("second import: %d", again.Status)
	}
	mustContain(t, "the match page", again.Body, "Record already in the catalogue?", "001 11224466", "Overlay record "+firstID, "Add as a new record anyway")
	// The note says, as a warning, which record matched and by what, and that
	// the cataloguer may overlay it or add a new record.
	mustContain(t, "the match page's note", again.Body, `<p class="flash warn" role="status">The record from yaz SRU matches record `+firstID+`, `,
		"already in the catalogue: matched by 001 11224466. Overlay that record with it (its MARC is replaced; its copies and holds stay), or add it as a new record.</p>")
	if got := e.recordTitles(t); len(got) != 1 {
		t.Fatalf("the match page imported: records %q", got)
	}
	if r := e.post(t, desk, "/cataloguing/copy/import", url.Values{"marc": {marcXML}, "target": {"yaz SRU"}, "mode": {"add"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("add anyway: %d", r.Status)
	}
	if got := e.recordTitles(t); len(got) != 2 {
		t.Fatalf("after adding anyway: records %q", got)
	}
	over := e.post(t, desk, "/cataloguing/copy/import", url.Values{"marc": {marcXML}, "target": {"yaz Z39.50"}, "mode": {"overlay"}, "record": {firstID}})
	if over.Status != http.StatusSeeOther || over.Location != "/records/"+firstID+"/items/new" {
		t.Fatalf("overlay: %d to %q", over.Status, over.Location)
	}
	mustContain(t, "the item form after the overlay", e.get(t, desk, over.Location).Body, "Record "+firstID+" is overlaid", "copies and holds are kept")
	if got := e.recordTitles(t); len(got) != 2 {
		t.Fatalf("after the overlay: records %q", got)
	}
	if r := e.post(t, desk, "/cataloguing/copy/import", url.Values{"marc": {"<not marc"}}); r.Status != http.StatusUnprocessableEntity && r.Status != http.StatusBadRequest {
		t.Errorf("a broken record: %d", r.Status)
	}
}

// With no target enabled the page says who can add one.
func TestCopycatNoTargets(t *testing.T) {
	e := newEnv(t)
	desk := e.client(t)
	e.login(t, desk, "desk", "desk")
	r := e.get(t, desk, "/cataloguing/copy?by=title&q=dune")
	if r.Status != http.StatusConflict || !strings.Contains(r.Body, "No copy cataloguing target is enabled") {
		t.Errorf("no targets: %d", r.Status)
	}
}

// copycatTargetForm is the targets form as an administrator fills it.
func copycatTargetForm() url.Values {
	return url.Values{"name": {"Union catalogue"}, "kind": {"z3950"}, "address": {"127.0.0.1:9/Books"}, "syntax": {"MARC21"}, "timeout": {"5"}}
}

// copycatHostileRecord is a record as the results page's import form carries it.
const copycatHostileRecord = `<record xmlns="http://www.loc.gov/MARC21/slim"><leader>00000nam a2200000 a 4500</leader>` +
	`<controlfield tag="001">hostile1</controlfield><datafield tag="245" ind1="0" ind2="0"><subfield code="a">Hostile</subfield></datafield></record>`

// TestCopycatOneTarget: a search of the one target says so in the singular.
func TestCopycatOneTarget(t *testing.T) {
	e := newEnv(t)
	yaz := yaztest.New(t)
	admin := e.client(t)
	e.login(t, admin, "admin", "admin")
	if r := e.post(t, admin, "/admin/copycat", url.Values{"name": {"yaz SRU"}, "kind": {"sru"}, "address": {yaz.SRU()}, "syntax": {"MARCXML"}, "timeout": {"20"}, "enabled": {"1"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("adding the target: %d %s", r.Status, r.Body)
	}
	res := e.get(t, admin, "/cataloguing/copy?by=isbn&q=0201896834")
	mustContain(t, "the results", res.Body, ">1 catalogue searched.</p>", "How to program a computer")
}
