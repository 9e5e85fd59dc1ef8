package catalog_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
)

const leGuin = `=LDR  00000nam\a2200000\a\4500
=001  ocm123
=020  \\$a0441478123 (pbk.) :$c{dollar}7.50
=100  1\$aLe Guin, Ursula K.,$d1929-2018.
=245  14$aThe left hand of darkness :$ba novel /$cUrsula K. Le Guin.
=246  3\$aLeft hand
=264  \1$aNew York :$bAce Books,$cc1969.
=650  \0$aAndrogyny$vFiction.
=650  \0$aSpace colonies$vFiction.
=700  1\$aSomeone, Else.
`

// marcDB is a small demo library on engine e.
func marcDB(t *testing.T, e db.Engine) *db.DB {
	return demoDBOn(t, e, demo.Options{Titles: 100, Patrons: 10}, db.Options{})
}

// leGuinRecord opens a library on engine eng (marcDB) with the record leGuin
// in it, created through the service as the MARC editor creates one.
func leGuinRecord(t *testing.T, eng db.Engine) (*db.DB, *catalog.Service, int64) {
	t.Helper()
	d := marcDB(t, eng)
	svc := catalog.NewService(d, catalog.Timeouts{})
	id, err := svc.CreateRecordText(context.Background(), editor, leGuin)
	if err != nil {
		t.Fatal(err)
	}
	return d, svc, id
}

// TestQuickFormWritesThrough: each field of the quick form changes only its
// own subfields of the MARC.
func TestQuickFormWritesThrough(t *testing.T) { forEngines(t, testQuickFormWritesThrough) }

func testQuickFormWritesThrough(t *testing.T, eng db.Engine) {
	_, svc, id := leGuinRecord(t, eng)
	ctx := context.Background()
	in, err := svc.RecordInput(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if in.Title != "The left hand of darkness: a novel" || in.Author != "Le Guin, Ursula K." || in.ISBN != "0441478123" ||
		in.Publisher != "Ace Books" || in.Year != "1969" || in.Subjects != "Androgyny -- Fiction\nSpace colonies -- Fiction" {
		t.Fatalf("derived fields %+v", in)
	}
	in.Title = "The Left Hand of Darkness: a novel"
	in.Author = "LeGuin, Ursula K."
	in.ISBN = "9780441478125"
	in.Year = "1976"
	in.Subjects = "Space colonies -- Fiction\nGender -- Fiction"
	if err := svc.UpdateRecord(ctx, editor, id, in); err != nil {
		t.Fatal(err)
	}
	e, err := svc.MARCEdit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := `=LDR  00390nam\a2200133\a\4500
=001  ocm123
=020  \\$a9780441478125 (pbk.) :$c{dollar}7.50
=100  1\$aLeGuin, Ursula K.,$d1929-2018.
=245  14$aThe Left Hand of Darkness :$ba novel /$cUrsula K. Le Guin.
=246  3\$aLeft hand
=264  \1$aNew York :$bAce Books,$cc1976.
=650  \0$aSpace colonies$vFiction.
=650  \0$aGender$xFiction
=700  1\$aSomeone, Else.
`
	if e.Text != want {
		t.Errorf("MARC after the quick form:\n%s\nwant\n%s", e.Text, want)
	}
	if e.Version != 2 || len(e.Versions) != 2 {
		t.Errorf("version %d of %d, want 2 (created, edited)", e.Version, len(e.Versions))
	}
	// A save that changes nothing keeps no new version.
	in, _ = svc.RecordInput(ctx, id)
	if err := svc.UpdateRecord(ctx, editor, id, in); err != nil {
		t.Fatal(err)
	}
	if again, _ := svc.MARCEdit(ctx, id); again.Version != e.Version || again.Text != want {
		t.Errorf("an unchanged save made version %d:\n%s", again.Version, again.Text)
	}
}

// TestMARCEditorVersions: the editor saves over the version it read, refuses a
// save over a newer one, and restores an old version as a new one; each save
// is audited.
func TestMARCEditorVersions(t *testing.T) { forEngines(t, testMARCEditorVersions) }

func testMARCEditorVersions(t *testing.T, eng db.Engine) {
	d, svc, id := leGuinRecord(t, eng)
	ctx := context.Background()
	e, _ := svc.MARCEdit(ctx, id)
	if e.Version != 1 {
		t.Fatalf("a new record is version %d", e.Version)
	}
	edited := strings.Replace(e.Text, "=700  1\\$aSomeone, Else.\n", "=500  \\\\$aFirst published 1969.\n", 1)
	p, err := svc.PreviewMARC(ctx, id, edited)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Diff.Summary(); got != "added 500; removed 700" || p.Title != "The left hand of darkness: a novel" {
		t.Errorf("preview %q of %q", got, p.Title)
	}
	if err := svc.SaveMARCText(ctx, editor, id, edited, e.Version); err != nil {
		t.Fatal(err)
	}
	// Someone edits from the first version again: refused.
	err = svc.SaveMARCText(ctx, editor, id, e.Text, e.Version)
	if stacks.ErrorCode(err) != stacks.ECONFLICT {
		t.Fatalf("save over a newer version: %v", err)
	}
	// Faulty text: every faulty line reported, nothing saved.
	err = svc.SaveMARCText(ctx, editor, id, edited+"=24  x\n=245  1\n", 2)
	if lines, ok := err.(catalog.ErrLines); !ok || len(lines) != 2 {
		t.Fatalf("faulty text: %v", err)
	}
	if err := svc.SaveMARCText(ctx, editor, id, strings.Replace(edited, "=245  14$aThe left hand of darkness :$ba novel /$cUrsula K. Le Guin.\n=246  3\\$aLeft hand\n", "", 1), 2); stacks.ErrorCode(err) != stacks.EINVALID {
		t.Fatalf("a record without a title: %v", err)
	}
	long := strings.Replace(edited, "=500  \\\\$aFirst", "=500  \\\\$a"+strings.Repeat("x", 10_000)+" First", 1)
	if err := svc.SaveMARCText(ctx, editor, id, long, 2); stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "too long") {
		t.Fatalf("a field over ISO 2709's limit: %v", err)
	}
	vs, err := svc.VersionPreview(ctx, id, 1)
	if err != nil || vs.Diff.Summary() != "added 700; removed 500" || len(vs.Versions) != 2 {
		t.Fatalf("restore preview %q of %d versions: %v", vs.Diff.Summary(), len(vs.Versions), err)
	}
	if err := svc.RestoreVersion(ctx, editor, id, 1); err != nil {
		t.Fatal(err)
	}
	now, _ := svc.MARCEdit(ctx, id)
	if now.Text != e.Text || now.Version != 3 || now.Versions[0].Actor != "desk" {
		t.Errorf("after restoring version 1, version %d:\n%s", now.Version, now.Text)
	}
	if auditCount(t, d, "record.update", id) != 1 || auditCount(t, d, "record.restore", id) != 1 || auditCount(t, d, "record.create", id) != 1 {
		t.Error("the saves are not audited")
	}
	if _, err := svc.VersionPreview(ctx, id, 9); stacks.ErrorCode(err) != stacks.ENOTFOUND {
		t.Errorf("version 9: %v", err)
	}
}

// TestLegacyRecordExport: a record whose fields were edited while its MARC was
// kept as imported is exported with the edits written through, its other
// fields kept.
func TestLegacyRecordExport(t *testing.T) { forEngines(t, testLegacyRecordExport) }

func testLegacyRecordExport(t *testing.T, eng db.Engine) {
	d, _, id := leGuinRecord(t, eng)
	mustWriteTx(t, d, func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE records SET title = 'The left hand of light: a novel', updated_at = updated_at WHERE id = ?`, id)
		return err
	})
	var rec *marc.Record
	mustWriteTx(t, d, func(tx *db.Tx) (err error) {
		rec, err = catalog.RecordMARC(tx, id)
		return err
	})
	text := marc.FormatText(rec)
	if !strings.Contains(text, "=245  14$aThe left hand of light :$ba novel /$cUrsula K. Le Guin.\n") || !strings.Contains(text, "=700  1\\$aSomeone, Else.") {
		t.Errorf("legacy record's MARC:\n%s", text)
	}
}

// TestVersionAfterImport: MARC that changed outside the editor (an import
// overlaying the record) is kept as a version before the next save replaces it.
func TestVersionAfterImport(t *testing.T) { forEngines(t, testVersionAfterImport) }

func testVersionAfterImport(t *testing.T, eng db.Engine) {
	d, svc, id := leGuinRecord(t, eng)
	ctx := context.Background()
	overlay, errs := marc.ParseText(strings.Replace(leGuin, "=700  1\\$aSomeone, Else.\n", "=700  1\\$aImported, Overlay.\n", 1))
	if errs != nil {
		t.Fatal(errs)
	}
	if _, err := catalog.Import(ctx, d, &sliceReader{recs: []*marc.Record{overlay}}, catalog.ImportOptions{Actor: editor, Branch: "CEN", ItemType: "BOOK"}); err != nil {
		t.Fatal(err)
	}
	e, _ := svc.MARCEdit(ctx, id)
	if !strings.Contains(e.Text, "Imported, Overlay.") {
		t.Fatalf("the import did not overlay record %d:\n%s", id, e.Text)
	}
	in, _ := svc.RecordInput(ctx, id)
	in.Title = "The left hand of darkness: a novel, again"
	if err := svc.UpdateRecord(ctx, editor, id, in); err != nil {
		t.Fatal(err)
	}
	e, _ = svc.MARCEdit(ctx, id)
	if e.Version != 3 {
		t.Fatalf("version %d, want 3 (created, imported, edited)", e.Version)
	}
	var v2 *marc.Record
	mustWriteTx(t, d, func(tx *db.Tx) (err error) {
		v2, err = catalog.RecordVersionMARC(tx, id, 2)
		return err
	})
	if !strings.Contains(marc.FormatText(v2), "Imported, Overlay.") || strings.Contains(marc.FormatText(v2), "again") {
		t.Errorf("version 2 is not the imported MARC:\n%s", marc.FormatText(v2))
	}
}

type sliceReader struct{ recs []*marc.Record }

func (r *sliceReader) Next() (*marc.Record, error) {
	if len(r.recs) == 0 {
		return nil, io.EOF
	}
	rec := r.recs[0]
	r.recs = r.recs[1:]
	return rec, nil
}
