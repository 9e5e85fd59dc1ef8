package catalog_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// TestStagedTwiceMatched: two staged records match the same catalogue
// record. The commit overlays it with each in turn (the page ends before the
// second), keeping each MARC as a version; the undo gives it back the MARC it
// had before the first, in one new version.
func TestStagedTwiceMatched(t *testing.T) { forEngines(t, testStagedTwiceMatched) }

func testStagedTwiceMatched(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	id := l.marcRecord(sbib("Original", scf("001", "T1")))
	batch, err := catalog.StageImport(ctx, l.d, iso(t, sbib("First", scf("001", "T1")), sbib("Second", scf("001", "T1"))),
		catalog.StageOptions{Actor: editor, Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := catalog.CommitImport(ctx, l.d, editor, batch)
	if err != nil || sum.Overlaid != 2 || sum.Created != 0 {
		t.Fatalf("commit %+v, %v", sum, err)
	}
	if got := l.str(`SELECT title FROM records WHERE id = ?`, id); got != "Second" {
		t.Errorf("title %q after the commit, want the second overlay's", got)
	}
	titles := func() string {
		var out string
		err := l.d.Read(ctx, func(tx *db.Tx) error {
			vs, err := catalog.RecordVersions(tx, id)
			if err != nil {
				return err
			}
			for i := len(vs) - 1; i >= 0; i-- {
				rec, err := catalog.RecordVersionMARC(tx, id, vs[i].Version)
				if err != nil {
					return err
				}
				out += fmt.Sprintf("%d %s;", vs[i].Version, catalog.BibOf(rec).Title)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := titles(), "1 Original;2 First;3 Second;"; got != want {
		t.Errorf("versions after the commit %q, want %q", got, want)
	}
	sctx, stats := db.WithStats(ctx)
	usum, err := catalog.UndoImport(sctx, l.d, editor, batch)
	if err != nil || usum.Restored != 1 {
		t.Fatalf("undo %+v, %v", usum, err)
	}
	// Reads, deletes and the batch's state, then a read of the overlaid
	// records, their update and their versions per 500 of them.
	if n := stats.Statements(); n > 13 {
		t.Errorf("the undo ran %d statements, want at most 13", n)
	}
	if got := l.str(`SELECT title FROM records WHERE id = ?`, id); got != "Original" {
		t.Errorf("title %q after the undo, want the MARC before the first overlay", got)
	}
	if got, want := titles(), "1 Original;2 First;3 Second;4 Original;"; got != want {
		t.Errorf("versions after the undo %q, want %q", got, want)
	}
}

// TestStagedUndoAfterEdit: a record the batch overlaid and staff edited
// since gets back the MARC it had before the import; the edit is not lost
// from its versions, whose latest before the undo holds it.
func TestStagedUndoAfterEdit(t *testing.T) { forEngines(t, testStagedUndoAfterEdit) }

func testStagedUndoAfterEdit(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	id := l.marcRecord(sbib("Original", scf("001", "E1")))
	batch, err := catalog.StageImport(ctx, l.d, iso(t, sbib("Imported", scf("001", "E1"))), catalog.StageOptions{Actor: editor, Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := catalog.CommitImport(ctx, l.d, editor, batch); err != nil || sum.Overlaid != 1 {
		t.Fatalf("commit %+v, %v", sum, err)
	}
	err = l.d.Write(ctx, func(tx *db.Tx) error {
		return catalog.SaveMARC(tx, editor, id, sbib("Imported and edited", scf("001", "E1")))
	})
	if err != nil {
		t.Fatal(err)
	}
	usum, err := catalog.UndoImport(ctx, l.d, editor, batch)
	if err != nil || usum.Restored != 1 {
		t.Fatalf("undo %+v, %v", usum, err)
	}
	if got := l.str(`SELECT title FROM records WHERE id = ?`, id); got != "Original" {
		t.Errorf("title %q after the undo, want the MARC before the import", got)
	}
	if n := l.int(`SELECT count(*) FROM record_versions WHERE record_id = ? AND marc LIKE '%Imported and edited%'`, id); n != 1 {
		t.Errorf("the edit is in %d versions, want 1", n)
	}
	if n := l.int(`SELECT max(version) FROM record_versions WHERE record_id = ?`, id); n != 4 {
		t.Errorf("latest version %d, want 4 (created, imported, edited, restored)", n)
	}
}

// TestStagedGeneratedBarcodeTaken: a generated barcode that a copy already
// has is generated again.
func TestStagedGeneratedBarcodeTaken(t *testing.T) { forEngines(t, testStagedGeneratedBarcodeTaken) }

func testStagedGeneratedBarcodeTaken(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	owner := l.marcRecord(sbib("Owner"))
	n := l.int(`SELECT count(*) FROM items`)
	taken := fmt.Sprintf("M%08d", n+2) // the first generated once this copy is added
	l.exec(`INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, created_at, updated_at) VALUES (?, ?, 1, 1, 1, ?, ?)`,
		taken, owner, db.FormatTime(l.now), db.FormatTime(l.now))
	batch, err := catalog.StageImport(ctx, l.d, iso(t, sbib("No copies given")), catalog.StageOptions{Actor: editor, Branch: "CEN", ItemType: "BOOK", GenerateItems: true})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := catalog.CommitImport(ctx, l.d, editor, batch)
	if err != nil || sum.Copies != 1 || sum.CopiesSkipped != 0 {
		t.Fatalf("commit %+v, %v", sum, err)
	}
	if got, want := l.str(`SELECT i.barcode FROM items i JOIN records r ON r.id = i.record_id WHERE r.title = 'No copies given'`), fmt.Sprintf("M%08d", n+3); got != want {
		t.Errorf("generated barcode %q, want %q (the next after the one taken)", got, want)
	}
}
