package catalog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// bib builds a MARC record from its title and other fields.
func sbib(title string, fields ...marc.Field) *marc.Record {
	r := &marc.Record{Leader: "00000nam a2200000 a 4500"}
	r.Fields = append(r.Fields, fields...)
	if title != "" {
		r.Fields = append(r.Fields, sdf("245", 'a', title))
	}
	return r
}

func scf(tag, v string) marc.Field { return marc.Field{Tag: tag, Value: v} }

// df is a data field from code, value pairs.
func sdf(tag string, pairs ...any) marc.Field {
	f := marc.Field{Tag: tag, Ind1: ' ', Ind2: ' '}
	for i := 0; i < len(pairs); i += 2 {
		f.Subfields = append(f.Subfields, marc.Subfield{Code: byte(pairs[i].(rune)), Value: pairs[i+1].(string)})
	}
	return f
}

func iso(t testing.TB, recs ...*marc.Record) marc.RecordReader {
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

func (l *lib) marcRecord(rec *marc.Record) int64 {
	l.t.Helper()
	var id int64
	if err := l.d.Write(context.Background(), func(tx *db.Tx) (err error) {
		id, err = catalog.CreateRecordMARC(tx, editor, rec)
		return err
	}); err != nil {
		l.t.Fatal(err)
	}
	return id
}

func (l *lib) batch(id int64) *catalog.ImportBatch {
	l.t.Helper()
	var b *catalog.ImportBatch
	if err := l.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		b, err = catalog.FindImportBatch(tx, id)
		return err
	}); err != nil {
		l.t.Fatal(err)
	}
	return b
}

func (l *lib) staged(id int64, list string) []catalog.StagedRecord {
	l.t.Helper()
	var out []catalog.StagedRecord
	if err := l.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		var total int
		out, total, err = catalog.StagedRecords(tx, id, list, 0, 50)
		if err == nil && total != len(out) {
			l.t.Errorf("list %s: total %d, %d listed", list, total, len(out))
		}
		return err
	}); err != nil {
		l.t.Fatal(err)
	}
	return out
}

// stagedFile is the file the tests stage: a record matching each rule, a new
// one with copies in each Koha status, and one without a title.
func stagedFile(t testing.TB) marc.RecordReader {
	return iso(t,
		sbib("New one", scf("001", "X100"), sdf("952", 'p', "IMP1", 'a', "EAS", '0', "1")),
		sbib("New two", sdf("035", 'a', "12345")),
		sbib("New three", sdf("020", 'a', "9780306406157"), sdf("952", 'p', "IMP2")),
		sbib("Brand new", sdf("952", 'p', "IMP3", '1', "1"), sdf("952", 'p', "IMP4", '1', "4"),
			sdf("952", 'p', "IMP5", '4', "1"), sdf("952", 'p', "IMP6", '7', "-1")),
		sbib("", sdf("500", 'a', "no title")),
	)
}

func TestStagedImport(t *testing.T) { forEngines(t, testStagedImport) }

func testStagedImport(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	e1 := l.marcRecord(sbib("Old one", scf("001", "X100")))
	e2 := l.marcRecord(sbib("Old two", sdf("035", 'a', "(OCoLC)ocm00012345")))
	e3 := l.marcRecord(sbib("Old three", sdf("020", 'a', "0306406152")))
	l.exec(`INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, created_at, updated_at) VALUES ('OLD1', ?, 1, 1, 1, ?, ?)`,
		e1, db.FormatTime(l.now), db.FormatTime(l.now))

	id, err := catalog.StageImport(ctx, l.d, stagedFile(t), catalog.StageOptions{Actor: editor, FileName: "vendor.mrc", Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	if n := l.int(`SELECT count(*) FROM records`); n != 3 {
		t.Fatalf("staging wrote to the catalogue: %d records", n)
	}
	b := l.batch(id)
	if b.State != catalog.BatchStaged || b.Records != 5 || b.New != 1 || b.Errors != 1 ||
		b.Matched[catalog.RuleControl] != 1 || b.Matched[catalog.RuleSystem] != 1 || b.Matched[catalog.RuleISBN] != 1 {
		t.Fatalf("batch %+v", b)
	}
	for _, c := range []struct {
		list  string
		pos   int
		match int64
		name  string
	}{{catalog.RuleControl, 0, e1, "Old one"}, {catalog.RuleSystem, 1, e2, "Old two"}, {catalog.RuleISBN, 2, e3, "Old three"}, {catalog.ListNew, 3, 0, ""}} {
		got := l.staged(id, c.list)
		if len(got) != 1 || got[0].Position != c.pos || got[0].MatchID != c.match || got[0].MatchName != c.name {
			t.Errorf("list %s: %+v", c.list, got)
		}
	}
	if errs := l.staged(id, catalog.ListErrors); len(errs) != 1 || errs[0].Position != 4 || !strings.Contains(errs[0].Error, "no title") {
		t.Errorf("errors: %+v", errs)
	}

	err = l.d.Write(ctx, func(tx *db.Tx) error {
		return catalog.SetImportActions(tx, editor, id, map[string]string{catalog.RuleSystem: catalog.ActionSkip, catalog.RuleISBN: catalog.ActionNew})
	})
	if err != nil {
		t.Fatal(err)
	}
	err = l.d.Write(ctx, func(tx *db.Tx) error {
		return catalog.SetImportActions(tx, editor, id, map[string]string{catalog.RuleISBN: "merge"})
	})
	wantRefused(t, err, stacks.EINVALID, "overlay")

	sum, err := catalog.CommitImport(ctx, l.d, editor, id)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Created != 2 || sum.Overlaid != 1 || sum.Skipped != 1 || sum.Copies != 6 {
		t.Fatalf("commit %+v", sum)
	}
	if got := l.str(`SELECT title FROM records WHERE id = ?`, e1); got != "New one" {
		t.Errorf("overlaid title %q", got)
	}
	if got := l.str(`SELECT title FROM records WHERE id = ?`, e2); got != "Old two" {
		t.Errorf("skipped record's title %q", got)
	}
	if n := l.int(`SELECT count(*) FROM records WHERE isbn = '9780306406157'`); n != 1 {
		t.Errorf("ISBN match added as new: %d records", n)
	}
	// The overlaid record keeps its MARC before the import as a version.
	if n := l.int(`SELECT count(*) FROM record_versions WHERE record_id = ? AND marc LIKE '%Old one%'`, e1); n != 1 {
		t.Errorf("old MARC kept in %d versions", n)
	}
	for bc, want := range map[string]string{"IMP1": "withdrawn", "IMP2": "available", "IMP3": "lost", "IMP4": "missing", "IMP5": "available", "IMP6": "available"} {
		if got := l.str(`SELECT status FROM items WHERE barcode = ?`, bc); got != want {
			t.Errorf("copy %s: status %q, want %q", bc, got, want)
		}
	}
	if got := l.str(`SELECT withdrawn_reason FROM items WHERE barcode = 'IMP1'`); !strings.Contains(got, "952 $0") {
		t.Errorf("withdrawal reason %q", got)
	}
	if got := l.str(`SELECT b.code FROM items i JOIN branches b ON b.id = i.home_branch_id WHERE i.barcode = 'IMP1'`); got != "EAS" {
		t.Errorf("IMP1 home branch %q", got)
	}
	if len(sum.Notes) != 2 {
		t.Errorf("notes %+v, want the damaged and the not-for-loan copies", sum.Notes)
	}
	if n := l.int(`SELECT count(*) FROM audit_log WHERE action = 'catalog.import.commit' AND object_id = ?`, id); n != 1 {
		t.Errorf("%d commit audit entries", n)
	}
	if n := l.int(`SELECT count(*) FROM audit_log WHERE action IN ('record.create', 'record.update', 'record.overlay') AND actor = ?`, editor.Name); n != 3 {
		t.Errorf("the commit audited records one by one: %d entries beside the test's own 3", n)
	}
	_, err = catalog.CommitImport(ctx, l.d, editor, id)
	wantRefused(t, err, stacks.ECONFLICT, "already committed")

	// Undo: created records and every copy the batch added go, the overlaid
	// record gets its MARC back; the copy it had stays.
	created, err := func() ([]int64, error) {
		var ids []int64
		return ids, l.d.Read(ctx, func(tx *db.Tx) (err error) {
			ids, err = tx.IDs(`SELECT record_id FROM import_batch_records WHERE batch_id = ? AND outcome = 'created' ORDER BY 1`, id)
			return err
		})
	}()
	if err != nil || len(created) != 2 {
		t.Fatalf("created %v, %v", created, err)
	}
	usum, err := catalog.UndoImport(ctx, l.d, editor, id)
	if err != nil {
		t.Fatal(err)
	}
	if usum.Deleted != 2 || usum.Restored != 1 || usum.CopiesDeleted != 6 {
		t.Errorf("undo %+v", usum)
	}
	if got := l.str(`SELECT title FROM records WHERE id = ?`, e1); got != "Old one" {
		t.Errorf("restored title %q", got)
	}
	if n := l.int(`SELECT count(*) FROM records`); n != 3 {
		t.Errorf("%d records after the undo", n)
	}
	if n := l.int(`SELECT count(*) FROM items`); n != 1 {
		t.Errorf("%d copies after the undo", n)
	}
	if n := l.int(`SELECT count(*) FROM deleted_records WHERE record_id IN (?, ?)`, created[0], created[1]); n != 2 {
		t.Errorf("OAI knows %d of the 2 deleted records", n)
	}
	if b := l.batch(id); b.State != catalog.BatchUndone {
		t.Errorf("state %s", b.State)
	}
	_, err = catalog.UndoImport(ctx, l.d, editor, id)
	wantRefused(t, err, stacks.ECONFLICT, "only a committed batch")
	l.checkClean()
}

// TestStagedImportUndoRefused: a batch whose copy was lent, or whose record has
// a hold, is not undone, and nothing changes.
func TestStagedImportUndoRefused(t *testing.T) { forEngines(t, testStagedImportUndoRefused) }

func testStagedImportUndoRefused(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	stageCommit := func() int64 {
		id, err := catalog.StageImport(ctx, l.d, iso(t, sbib("Lent", sdf("952", 'p', fmt.Sprintf("L%d", l.int(`SELECT count(*) FROM import_batches`))))),
			catalog.StageOptions{Actor: editor, Branch: "CEN", ItemType: "BOOK"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := catalog.CommitImport(ctx, l.d, editor, id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	id := stageCommit()
	item := l.int(`SELECT item_id FROM import_batch_items WHERE batch_id = ?`, id)
	l.lend(item, 1, true)
	_, err := catalog.UndoImport(ctx, l.d, editor, id)
	wantRefused(t, err, stacks.ECONFLICT, "has been lent")
	if b := l.batch(id); b.State != catalog.BatchCommitted {
		t.Errorf("state %s", b.State)
	}

	id = stageCommit()
	rec := l.int(`SELECT record_id FROM import_batch_records WHERE batch_id = ?`, id)
	l.hold(rec, 2, 0, l.now)
	_, err = catalog.UndoImport(ctx, l.d, editor, id)
	wantRefused(t, err, stacks.ECONFLICT, "has a hold")
	if n := l.int(`SELECT count(*) FROM records WHERE id = ?`, rec); n != 1 {
		t.Error("the refused undo deleted the record")
	}
}

// TestStageRealFiles: real files stage with every record accounted for, bad
// ones listed as errors by position, and nothing written to the catalogue.
func TestStageRealFiles(t *testing.T) { forEngines(t, testStageRealFiles) }

func testStageRealFiles(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	for _, name := range []string{"microlif.001", "zebra-sample.mrc"} {
		data, err := os.ReadFile("/work/shared/marc/" + name)
		if err != nil {
			t.Skipf("no test file: %v", err)
		}
		rr, err := marc.NewAutoReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		id, err := catalog.StageImport(context.Background(), l.d, rr, catalog.StageOptions{Actor: editor, FileName: name, Branch: "CEN", ItemType: "BOOK"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b := l.batch(id)
		if b.Records == 0 || b.New+b.MatchedTotal()+b.Errors != b.Records {
			t.Errorf("%s: %+v", name, b)
		}
		for _, s := range l.staged(id, catalog.ListErrors) {
			if s.Error == "" {
				t.Errorf("%s: error row %d without a reason", name, s.Position)
			}
		}
		t.Logf("%s: %d records, %d new, %d errors", name, b.Records, b.New, b.Errors)
	}
	if n := l.int(`SELECT count(*) FROM records`); n != 0 {
		t.Errorf("staging wrote %d records", n)
	}
}

// TestStagedOverlayUnchanged: overlaying a record with the MARC it already has
// keeps no new version and leaves the record as it was.
func TestStagedOverlayUnchanged(t *testing.T) { forEngines(t, testStagedOverlayUnchanged) }

func testStagedOverlayUnchanged(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	rec := sbib("Same", scf("001", "S1"))
	id := l.marcRecord(rec)
	versions := l.int(`SELECT count(*) FROM record_versions WHERE record_id = ?`, id)
	var source string
	if err := l.d.Read(ctx, func(tx *db.Tx) error { return tx.QueryRow(`SELECT marc FROM records WHERE id = ?`, id).Scan(&source) }); err != nil {
		t.Fatal(err)
	}
	kept, err := marc.NewXMLReader(strings.NewReader(source)).Next()
	if err != nil {
		t.Fatal(err)
	}
	batch, err := catalog.StageImport(ctx, l.d, iso(t, kept), catalog.StageOptions{Actor: editor, Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := catalog.CommitImport(ctx, l.d, editor, batch)
	if err != nil || sum.Overlaid != 1 {
		t.Fatalf("commit %+v, %v", sum, err)
	}
	if n := l.int(`SELECT count(*) FROM record_versions WHERE record_id = ?`, id); n != versions {
		t.Errorf("%d versions, were %d", n, versions)
	}
	if _, err := catalog.UndoImport(ctx, l.d, editor, batch); err != nil {
		t.Fatal(err)
	}
	if got := l.str(`SELECT title FROM records WHERE id = ?`, id); got != "Same" {
		t.Errorf("title %q after the undo", got)
	}
	if n := l.int(`SELECT count(*) FROM record_versions WHERE record_id = ?`, id); n != versions {
		t.Errorf("%d versions after the undo, were %d", n, versions)
	}
}

// TestDirectImportStatuses: the direct import gives copies their Koha
// statuses from 952 too, and reports what Stacks has no status for.
func TestDirectImportStatuses(t *testing.T) { forEngines(t, testDirectImportStatuses) }

func testDirectImportStatuses(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	sum, err := catalog.Import(context.Background(), l.d, iso(t, sbib("Statuses",
		sdf("952", 'p', "D1", '0', "2"), sdf("952", 'p', "D2", '1', "1"), sdf("952", 'p', "D3", '1', "4"),
		sdf("952", 'p', "D4", '7', "1"), sdf("952", 'p', "D5", '0', "0", '1', "0"))),
		catalog.ImportOptions{Actor: editor, Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ItemsCreated != 5 || sum.Rejected != 0 || len(sum.Rejections) != 0 || len(sum.Notes) != 1 || !strings.Contains(sum.Notes[0].Reason, "not for loan") {
		t.Fatalf("import %+v", sum)
	}
	for bc, want := range map[string]string{"D1": "withdrawn", "D2": "lost", "D3": "missing", "D4": "available", "D5": "available"} {
		if got := l.str(`SELECT status FROM items WHERE barcode = ?`, bc); got != want {
			t.Errorf("copy %s: %q, want %q", bc, got, want)
		}
	}
	if n := l.int(`SELECT count(*) FROM items WHERE barcode = 'D1' AND withdrawn_at IS NOT NULL`); n != 1 {
		t.Error("the withdrawn copy does not say when")
	}
	l.checkClean()
}

// cancelAfter is a reader that cancels its context once it has given n records.
type cancelAfter struct {
	marc.RecordReader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Next() (*marc.Record, error) {
	if c.n == 0 {
		c.cancel()
	}
	c.n--
	return c.RecordReader.Next()
}

func TestStageFailureLeavesNoBatch(t *testing.T) { forEngines(t, testStageFailureLeavesNoBatch) }

// A file that cannot be staged to its end, failing after more than one
// chunk was written, leaves no batch to commit: a MARCXML document broken after
// record 1,001 (read without CheckXML, as the command line does), and a
// context cancelled part way.
func testStageFailureLeavesNoBatch(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	var doc strings.Builder
	doc.WriteString(`<collection xmlns="http://www.loc.gov/MARC21/slim">`)
	for i := 0; i < 1001; i++ {
		fmt.Fprintf(&doc, `<record><leader>00000nam a2200000 a 4500</leader><datafield tag="245" ind1="0" ind2="0"><subfield code="a">Book %d</subfield></datafield></record>`, i)
	}
	doc.WriteString(`<record><datafield tag="245" ind1="0" ind2="0"><subfield code="a">Broken & cut`)
	opt := catalog.StageOptions{Actor: editor, FileName: "broken.xml", Branch: "CEN", ItemType: "BOOK"}
	_, err := catalog.StageImport(context.Background(), l.d, marc.NewXMLReader(strings.NewReader(doc.String())), opt)
	if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "not well-formed") {
		t.Errorf("staging a broken MARCXML file: %v", err)
	}
	l.noBatch("a broken file")

	var recs []*marc.Record
	for i := 0; i < 2500; i++ {
		recs = append(recs, sbib(fmt.Sprintf("Book %d", i)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = catalog.StageImport(ctx, l.d, &cancelAfter{RecordReader: iso(t, recs...), n: 1500, cancel: cancel}, opt)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("staging with a cancelled context: %v", err)
	}
	l.noBatch("a cancelled staging")
}

func (l *lib) noBatch(what string) {
	l.t.Helper()
	if n := l.int(`SELECT count(*) FROM import_batches`); n != 0 {
		l.t.Errorf("%s left %d batches", what, n)
	}
	if n := l.int(`SELECT count(*) FROM import_batch_records`); n != 0 {
		l.t.Errorf("%s left %d staged records", what, n)
	}
}

// TestDeleteUnfinishedBatch: the clean-up of a staging that failed deletes a
// batch still staged, with its records, and leaves one committed meanwhile
// (with its records, which its undo reads) as it is.
func TestDeleteUnfinishedBatch(t *testing.T) { forEngines(t, testDeleteUnfinishedBatch) }

func testDeleteUnfinishedBatch(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	stage := func(title string) int64 {
		t.Helper()
		id, err := catalog.StageImport(ctx, l.d, iso(t, sbib(title)), catalog.StageOptions{Actor: editor, FileName: title + ".mrc", Branch: "CEN", ItemType: "BOOK"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	staged, committed := stage("Staged"), stage("Committed")
	if _, err := catalog.CommitImport(ctx, l.d, editor, committed); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{staged, committed} {
		if err := catalog.DeleteUnfinishedBatch(ctx, l.d, id); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.int(`SELECT count(*) FROM import_batches WHERE id = ?`, staged); n != 0 {
		t.Errorf("the staged batch is still there")
	}
	if n := l.int(`SELECT count(*) FROM import_batch_records WHERE batch_id = ?`, staged); n != 0 {
		t.Errorf("the staged batch's %d records are still there", n)
	}
	if b := l.batch(committed); b.State != catalog.BatchCommitted {
		t.Errorf("the committed batch is %q", b.State)
	}
	if n := l.int(`SELECT count(*) FROM import_batch_records WHERE batch_id = ?`, committed); n != 1 {
		t.Errorf("the committed batch keeps %d records, want 1", n)
	}
	if _, err := catalog.UndoImport(ctx, l.d, editor, committed); err != nil {
		t.Errorf("the committed batch's undo: %v", err)
	}
}
