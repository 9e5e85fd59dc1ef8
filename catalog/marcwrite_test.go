package catalog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// TestMARCSaveStatements pins how many statements a quick-form save and an
// editor save run: one read of the record and its latest version, the
// update, the version and the audit entry.
func TestMARCSaveStatements(t *testing.T) { forEngines(t, testMARCSaveStatements) }

func testMARCSaveStatements(t *testing.T, eng db.Engine) {
	_, svc, id := leGuinRecord(t, eng)
	ctx := context.Background()
	in, err := svc.RecordInput(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	in.Year = "1970"
	sctx, stats := db.WithStats(ctx)
	if err := svc.UpdateRecord(sctx, editor, id, in); err != nil {
		t.Fatal(err)
	}
	if n := stats.Statements(); n > 4 {
		t.Errorf("a quick-form save ran %d statements, want at most 4 (read, update, version, audit)", n)
	}
	e, err := svc.MARCEdit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stats = db.WithStats(ctx)
	if err := svc.SaveMARCText(sctx, editor, id, strings.Replace(e.Text, "Le Guin, Ursula K.,", "Le Guin, U. K.,", 1), e.Version); err != nil {
		t.Fatal(err)
	}
	if n := stats.Statements(); n > 4 {
		t.Errorf("an editor save ran %d statements, want at most 4 (read, update, version, audit)", n)
	}
	sctx, stats = db.WithStats(ctx)
	if _, err := svc.MARCEdit(sctx, id); err != nil {
		t.Fatal(err)
	}
	if n := stats.Statements(); n > 2 {
		t.Errorf("the MARC editor's page ran %d statements, want at most 2 (record, versions)", n)
	}
}

// TestQuickFormKeepsOthersEdit: A opens the quick form, B changes the title
// in the MARC editor, A saves a new year: the title stays as B saved it.
func TestQuickFormKeepsOthersEdit(t *testing.T) {
	forEngines(t, func(t *testing.T, eng db.Engine) { testQuickFormKeepsOthersEdit(t, eng, false) })
}

// TestQuickFormKeepsOthersEditUnversioned: the same when the record had no
// versions when A read the form (a record imported directly): B's save keeps
// the MARC A saw as version 1, and A's save writes through against it.
func TestQuickFormKeepsOthersEditUnversioned(t *testing.T) {
	forEngines(t, func(t *testing.T, eng db.Engine) { testQuickFormKeepsOthersEdit(t, eng, true) })
}

func testQuickFormKeepsOthersEdit(t *testing.T, eng db.Engine, unversioned bool) {
	d, svc, id := leGuinRecord(t, eng)
	ctx := context.Background()
	wantBase := 1
	if unversioned {
		if err := d.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`DELETE FROM record_versions WHERE record_id = ?`, id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		wantBase = 0 // none
	}
	a, err := svc.RecordInput(ctx, id) // A opens the quick form
	if err != nil {
		t.Fatal(err)
	}
	if a.Base != wantBase {
		t.Fatalf("the form shows version %d, want %d", a.Base, wantBase)
	}
	e, err := svc.MARCEdit(ctx, id) // B edits 245 in the MARC editor
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.SaveMARCText(ctx, editor, id, strings.Replace(e.Text, "The left hand of darkness", "The Left Hand of Darkness", 1), e.Version); err != nil {
		t.Fatal(err)
	}
	a.Year = "1970" // A saves the year
	if err := svc.UpdateRecord(ctx, editor, id, a); err != nil {
		t.Fatal(err)
	}
	got, err := svc.RecordInput(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "The Left Hand of Darkness: a novel" || got.Year != "1970" {
		t.Errorf("after B's title and A's year: title %q, year %q; want B's title and A's year", got.Title, got.Year)
	}
	if got.Base != 3 {
		t.Errorf("latest version %d, want 3 (the first, B's, A's)", got.Base)
	}
}

// TestOverlayKeepsPreviousMARC: a copy-cataloguing overlay of a record that
// has no versions (written before versions were kept) keeps the MARC it had
// as a version, then the new one.
func TestOverlayKeepsPreviousMARC(t *testing.T) { forEngines(t, testOverlayKeepsPreviousMARC) }

func testOverlayKeepsPreviousMARC(t *testing.T, eng db.Engine) {
	d, svc, id := leGuinRecord(t, eng)
	ctx := context.Background()
	before, err := svc.MARCEdit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rec, errs := marc.ParseText(strings.Replace(leGuin, "The left hand of darkness", "Left hand of darkness", 1))
	if errs != nil {
		t.Fatal(errs)
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`DELETE FROM record_versions WHERE record_id = ?`, id); err != nil {
			return err
		}
		return catalog.OverlayRecordFromMARC(tx, editor, id, rec, "a Z39.50 search")
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := svc.VersionPreview(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Versions) != 2 {
		t.Fatalf("%d versions after the overlay, want 2 (the MARC before, the overlay)", len(v.Versions))
	}
	var old *marc.Record
	err = d.Read(ctx, func(tx *db.Tx) (err error) {
		old, err = catalog.RecordVersionMARC(tx, id, 1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := marc.FormatText(old); got != before.Text {
		t.Errorf("version 1 is\n%s\nwant the MARC before the overlay\n%s", got, before.Text)
	}
	after, err := svc.MARCEdit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if after.Title != "Left hand of darkness: a novel" || after.Version != 2 {
		t.Errorf("after the overlay: title %q, version %d", after.Title, after.Version)
	}
}
