package copycat_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/copycat"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

func recordRow(t *testing.T, d *db.DB, id int64) (title, isbn, control, source string) {
	t.Helper()
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT title, isbn, control_number, marc FROM records WHERE id = ?`, id).Scan(&title, &isbn, &control, &source)
	})
	if err != nil {
		t.Fatal(err)
	}
	return
}

func recordCount(t *testing.T, d *db.DB) int {
	t.Helper()
	var n int
	if err := d.Read(context.Background(), func(tx *db.Tx) error { return tx.QueryRow(`SELECT count(*) FROM records`).Scan(&n) }); err != nil {
		t.Fatal(err)
	}
	return n
}

func book(control, isbn, title string, f035 ...string) *marc.Record {
	r := &marc.Record{Leader: "00000nam a2200000 a 4500"}
	if control != "" {
		r.Fields = append(r.Fields, marc.Field{Tag: "001", Value: control})
	}
	if isbn != "" {
		r.Fields = append(r.Fields, marc.Field{Tag: "020", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: isbn + " (pbk.)"}}})
	}
	for _, v := range f035 {
		r.Fields = append(r.Fields, marc.Field{Tag: "035", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: v}}})
	}
	r.Fields = append(r.Fields, marc.Field{Tag: "245", Ind1: '1', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: title + " /"}, {Code: 'c', Value: "someone."}}})
	return r
}

// A record found at yaz-ztest is imported, found again as a match by its 001,
// added anyway, and overlaid; each step audited.
func TestImportFromYaz(t *testing.T) {
	d := dbtest.Open(t, db.Options{})
	s := copycat.NewService(d)
	ctx := context.Background()
	sru, _ := yazTargets(t)
	res := s.Searcher.Search(ctx, []copycat.Target{sru}, query(t, copycat.Title, "computer"), 1)
	if res[0].Err != nil || len(res[0].Records) != 1 {
		t.Fatalf("search: %+v", res[0])
	}
	// The record travels through the results page's form as MARCXML.
	xml, err := marc.ToXML(res[0].Records[0])
	if err != nil {
		t.Fatal(err)
	}
	rec, err := copycat.RecordFromXML(xml)
	if err != nil {
		t.Fatal(err)
	}

	first, err := s.Import(ctx, admin, rec, sru.Name, copycat.ImportIfNew, 0)
	if err != nil || !first.Created || first.RecordID == 0 || len(first.Matches) != 0 {
		t.Fatalf("first import: %+v, %v", first, err)
	}
	title, _, control, source := recordRow(t, d, first.RecordID)
	if title != "How to program a computer" || control != "11224466" || source == "" {
		t.Errorf("record: title %q, control number %q, %d bytes of MARC", title, control, len(source))
	}
	kept, err := copycat.RecordFromXML(source)
	if err != nil || len(kept.Fields) != len(rec.Fields) {
		t.Errorf("kept MARC: %d fields (want %d), %v", len(kept.Fields), len(rec.Fields), err)
	}

	again, err := s.Import(ctx, admin, rec, sru.Name, copycat.ImportIfNew, 0)
	if err != nil || again.RecordID != 0 || len(again.Matches) != 1 || again.Matches[0].RecordID != first.RecordID || again.Matches[0].Reason != "001 11224466" {
		t.Fatalf("second import: %+v, %v; want it stopped by the match on 001", again, err)
	}
	if n := recordCount(t, d); n != 1 {
		t.Fatalf("%d records after a stopped import", n)
	}

	added, err := s.Import(ctx, admin, rec, sru.Name, copycat.ImportAdd, 0)
	if err != nil || !added.Created || added.RecordID == first.RecordID {
		t.Fatalf("add anyway: %+v, %v", added, err)
	}
	if m, err := s.Matches(ctx, rec); err != nil || len(m) != 2 {
		t.Errorf("matches after adding anyway: %+v, %v", m, err)
	}

	changed := book("11224466", "", "How to program a computer, second edition")
	over, err := s.Import(ctx, admin, changed, sru.Name, copycat.ImportOverlay, first.RecordID)
	if err != nil || over.RecordID != first.RecordID || over.Created {
		t.Fatalf("overlay: %+v, %v", over, err)
	}
	if title, _, _, _ := recordRow(t, d, first.RecordID); title != "How to program a computer, second edition" {
		t.Errorf("overlaid title %q", title)
	}
	if n := recordCount(t, d); n != 2 {
		t.Errorf("%d records after the overlay, want 2", n)
	}
	if _, err := s.Import(ctx, admin, changed, sru.Name, copycat.ImportOverlay, 999); stacks.ErrorCode(err) != stacks.ENOTFOUND {
		t.Errorf("overlaying a record that does not exist: %v", err)
	}
	for action, want := range map[string]int{"record.create": 2, "record.overlay": 1} {
		if n := auditCount(t, d, action); n != want {
			t.Errorf("%d %s entries, want %d", n, action, want)
		}
	}
}

// Matching by ISBN finds the other form of the same ISBN; by 035 finds the
// control number with or without its prefix.
func TestImportMatchRules(t *testing.T) {
	d := dbtest.Open(t, db.Options{})
	s := copycat.NewService(d)
	ctx := context.Background()
	byISBN, err := s.Import(ctx, admin, book("", "978-0-201-89683-1", "Art"), "", copycat.ImportIfNew, 0)
	if err != nil {
		t.Fatal(err)
	}
	byOCLC, err := s.Import(ctx, admin, book("12345", "", "Other"), "", copycat.ImportIfNew, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rec    *marc.Record
		id     int64
		reason string
	}{
		{book("", "0201896834", "Art, ISBN-10"), byISBN.RecordID, "ISBN 0201896834"},
		{book("ocm999", "", "Other, via OCLC", "(OCoLC)12345"), byOCLC.RecordID, "035 (OCoLC)12345"},
	} {
		m, err := s.Matches(ctx, c.rec)
		if err != nil || len(m) != 1 || m[0].RecordID != c.id || m[0].Reason != c.reason {
			t.Errorf("matches of %v: %+v, %v; want record %d by %q", c.rec.Fields, m, err, c.id, c.reason)
		}
	}
	if m, err := s.Matches(ctx, book("777", "9781234567897", "Unrelated")); err != nil || len(m) != 0 {
		t.Errorf("unrelated record matched %+v, %v", m, err)
	}
	if _, err := s.Import(ctx, admin, book("2", "", "Fine"), "a\x00b", copycat.ImportAdd, 0); stacks.ErrorCode(err) != stacks.EINVALID {
		t.Errorf("an origin with a NUL: %v", err)
	}
	if _, err := s.Import(ctx, admin, book("1", "", ""), "", copycat.ImportAdd, 0); stacks.ErrorCode(err) != stacks.EINVALID {
		t.Errorf("a record without a title: %v", err)
	}
}

// One file matches the same records whether it is staged, imported directly or
// copy-catalogued record by record: 001 to a control number, 035 to another
// record's 035 or to its control number, an ISBN-13 to the ISBN-10 of the same
// book (ahead of an 035 that matches nothing), and a record matching nothing
// is new.
func TestMatchesAgreeAcrossImports(t *testing.T) {
	d := emptyLibrary(t)
	s := copycat.NewService(d)
	ctx := context.Background()
	add := func(rec *marc.Record) int64 {
		t.Helper()
		res, err := s.Import(ctx, admin, rec, "", copycat.ImportAdd, 0)
		if err != nil {
			t.Fatal(err)
		}
		return res.RecordID
	}
	isbn10 := add(book("", "0201896834", "Art"))
	oclc := add(book("", "", "Other", "(OCoLC)555"))
	control := add(book("c-777", "", "Third"))
	oclcControl := add(book("12345", "", "Fourth"))
	file := []*marc.Record{
		book("", "9780201896831", "Art again", "(OCoLC)99999"),
		book("c-777", "", "Third again"),
		book("", "", "Other again", "ocm00555"),
		book("", "", "Fourth again", "(OCoLC)12345"),
		book("x-1", "9781234567897", "New"),
	}
	want := []struct {
		rule string
		id   int64
	}{{catalog.RuleISBN, isbn10}, {catalog.RuleControl, control}, {catalog.RuleSystem, oclc}, {catalog.RuleSystem, oclcControl}, {catalog.RuleNone, 0}}
	reason := map[string]string{catalog.RuleISBN: "ISBN ", catalog.RuleControl: "001 ", catalog.RuleSystem: "035 "}

	for i, rec := range file {
		m, err := s.Matches(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		if want[i].id == 0 {
			if len(m) != 0 {
				t.Errorf("copy cataloguing: record %d matched %+v, want none", i, m)
			}
			continue
		}
		if len(m) == 0 || m[0].RecordID != want[i].id || !strings.HasPrefix(m[0].Reason, reason[want[i].rule]) {
			t.Errorf("copy cataloguing: record %d matched %+v, want record %d by %s", i, m, want[i].id, want[i].rule)
		}
	}

	batch, err := catalog.StageImport(ctx, d, isoFile(t, file...), catalog.StageOptions{Actor: admin, FileName: "f.mrc", Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	staged := map[int]catalog.StagedRecord{}
	if err := d.Read(ctx, func(tx *db.Tx) error {
		for _, list := range append([]string{catalog.ListNew}, catalog.MatchRules...) {
			recs, _, err := catalog.StagedRecords(tx, batch, list, 0, 100)
			if err != nil {
				return err
			}
			for _, r := range recs {
				staged[r.Position] = r
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if r, ok := staged[i]; !ok || r.Rule != w.rule || r.MatchID != w.id {
			t.Errorf("staged import: record %d matched %q %d, want %q %d", i, r.Rule, r.MatchID, w.rule, w.id)
		}
	}

	before := recordCount(t, d)
	sum, err := catalog.Import(ctx, d, isoFile(t, file...), catalog.ImportOptions{Actor: admin, Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Updated != 4 || sum.Created != 1 || recordCount(t, d) != before+1 {
		t.Errorf("direct import: %+v, %d records after %d; want 4 updated, 1 created", sum, recordCount(t, d), before)
	}
	for i, w := range want {
		if w.id == 0 {
			continue
		}
		if title, _, _, _ := recordRow(t, d, w.id); title != strings.TrimSuffix(file[i].FieldsByTag("245")[0].Sub('a'), " /") {
			t.Errorf("direct import: record %d has title %q, want record %d's", w.id, title, i)
		}
	}
}

func isoFile(t *testing.T, recs ...*marc.Record) marc.RecordReader {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range recs {
		if err := marc.WriteISO2709(&buf, r); err != nil {
			t.Fatal(err)
		}
	}
	rr, err := marc.NewAutoReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// TestDirectImportAlikeInAnyBatch: the direct import matches a record to one it
// wrote earlier in the same file as it would once that one is in the database,
// so its result does not depend on its batch size. The catalogue keeps a
// record's first ISBN only: a record whose ISBN is another's second 020 is new
// whether the two fall in one batch or in two.
func TestDirectImportAlikeInAnyBatch(t *testing.T) {
	ctx := context.Background()
	first := book("", "0441478123", "First")
	first.Fields = slices.Insert(first.Fields, 1, marc.Field{Tag: "020", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: "0201896834"}}})
	second := book("", "0201896834", "Second")
	var sums []catalog.ImportSummary
	for _, size := range []int{1, 500} {
		d := emptyLibrary(t)
		sum, err := catalog.Import(ctx, d, isoFile(t, first, second), catalog.ImportOptions{Actor: admin, Branch: "CEN", ItemType: "BOOK", BatchSize: size})
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
	}
	for i, size := range []int{1, 500} {
		if sums[i].Created != 2 || sums[i].Updated != 0 {
			t.Errorf("batches of %d: %d created, %d updated; want 2 created", size, sums[i].Created, sums[i].Updated)
		}
	}
}

// emptyLibrary is a new database with one branch (CEN) and one item type
// (BOOK), what an import's copies need, and no records.
func emptyLibrary(t *testing.T) *db.DB {
	t.Helper()
	d := dbtest.Open(t, db.Options{})
	if err := d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO branches (id, code, name) VALUES (1, 'CEN', 'Central')`)
		if err == nil {
			_, err = tx.Exec(`INSERT INTO item_types (id, code, name) VALUES (1, 'BOOK', 'Book')`)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return d
}
