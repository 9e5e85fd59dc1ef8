package catalog_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// systemNumbers lists record id's rows of record_system_numbers, in order.
func (l *lib) systemNumbers(id int64) []string {
	l.t.Helper()
	var keys []string
	if err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT key FROM record_system_numbers WHERE record_id = ?`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				return err
			}
			keys = append(keys, k)
		}
		return rows.Err()
	}); err != nil {
		l.t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

func (l *lib) wantSystemNumbers(what string, id int64, want ...string) {
	l.t.Helper()
	if got := l.systemNumbers(id); !slices.Equal(got, want) {
		l.t.Errorf("%s: record %d indexed by %q, want %q", what, id, got, want)
	}
	l.checkClean() // record-system-numbers: every record's, as its MARC has them
}

// TestSystemNumbersFollowTheMARC: every writer of a record's MARC writes its
// 035 numbers (as the matcher compares them) to record_system_numbers: a new
// record, the MARC editor, the direct import's new and overlaid records, a
// staged batch's commit and its undo, a merge taking 035, and a deletion
// takes them away; `stacks check` finds the index as the MARC says after each.
func TestSystemNumbersFollowTheMARC(t *testing.T) { forEngines(t, testSystemNumbersFollowTheMARC) }

func testSystemNumbersFollowTheMARC(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	if n := l.int(`SELECT built FROM catalog_derived WHERE name = 'record_system_numbers'`); n != 1 {
		t.Fatalf("a new library's index of 035 numbers is not built (%d)", n)
	}
	a := l.marcRecord(sbib("Alpha", sdf("035", 'a', "(OCoLC)ocm00012345"), sdf("035", 'a', "(DLC) 2001012345")))
	l.wantSystemNumbers("created", a, "(DLC)2001012345", "12345")

	ed, err := l.svc.MARCEdit(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.svc.SaveMARCText(ctx, editor, a, strings.Replace(ed.Text, "ocm00012345", "on99999", 1), ed.Version); err != nil {
		t.Fatal(err)
	}
	l.wantSystemNumbers("the MARC editor's save", a, "(DLC)2001012345", "99999")
	ed, _ = l.svc.MARCEdit(ctx, a)
	if err := l.svc.SaveMARCText(ctx, editor, a, strings.Replace(ed.Text, "Alpha", "Alpha: a novel", 1), ed.Version); err != nil {
		t.Fatal(err)
	}
	l.wantSystemNumbers("a save leaving 035 alone", a, "(DLC)2001012345", "99999")

	// The direct import: Alpha matched by its 035 and overlaid with another
	// 035, and a new record with one.
	sum, err := catalog.Import(ctx, l.d, iso(t,
		sbib("Alpha again", sdf("035", 'a', "(OCoLC)99999"), sdf("035", 'a', "(Uk)B12")),
		sbib("Beta", sdf("035", 'a', "(OCoLC)777"))), catalog.ImportOptions{Actor: editor, Branch: "CEN", ItemType: "BOOK"})
	if err != nil || sum.Created != 1 || sum.Updated != 1 {
		t.Fatalf("import %+v: %v", sum, err)
	}
	l.wantSystemNumbers("overlaid by the import", a, "(UK)B12", "99999")
	b := l.int(`SELECT id FROM records WHERE title = 'Beta'`)
	l.wantSystemNumbers("created by the import", b, "777")

	// A staged batch: Beta matched by 035 and overlaid, a new record; then
	// undone.
	batch, err := catalog.StageImport(ctx, l.d, iso(t,
		sbib("Beta revised", sdf("035", 'a', "ocm777"), sdf("035", 'a', "(CaOTULAS)3")),
		sbib("Gamma", sdf("035", 'a', "(OCoLC)555"))), catalog.StageOptions{Actor: editor, FileName: "f.mrc", Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.staged(batch, catalog.RuleSystem); len(got) != 1 || got[0].MatchID != b {
		t.Fatalf("staged matches by 035: %+v, want Beta (%d)", got, b)
	}
	if _, err := catalog.CommitImport(ctx, l.d, editor, batch); err != nil {
		t.Fatal(err)
	}
	l.wantSystemNumbers("overlaid by a staged batch", b, "(CAOTULAS)3", "777")
	g := l.int(`SELECT id FROM records WHERE title = 'Gamma'`)
	l.wantSystemNumbers("created by a staged batch", g, "555")
	if _, err := catalog.UndoImport(ctx, l.d, editor, batch); err != nil {
		t.Fatal(err)
	}
	l.wantSystemNumbers("given back its MARC by the undo", b, "777")
	if n := l.int(`SELECT count(*) FROM record_system_numbers WHERE record_id = ?`, g); n != 0 {
		t.Errorf("the undo's deleted record keeps %d index rows", n)
	}

	// A merge that takes 035 from the record merged away.
	if _, err := l.svc.MergeRecords(ctx, editor, a, b, []string{"035"}); err != nil {
		t.Fatal(err)
	}
	l.wantSystemNumbers("kept by the merge, taking 035", a, "777")
	if n := l.int(`SELECT count(*) FROM record_system_numbers WHERE record_id = ?`, b); n != 0 {
		t.Errorf("the record merged away keeps %d index rows", n)
	}
	if _, err := l.svc.DeleteRecord(ctx, editor, a, 0); err != nil {
		t.Fatal(err)
	}
	if n := l.int(`SELECT count(*) FROM record_system_numbers`); n != 0 {
		t.Errorf("%d index rows after the last record with 035 was deleted", n)
	}
	l.checkClean()
}

// TestSystemNumbersBuiltFromOlderRecords: records whose MARC carried 035
// before the index existed (the migration marks it not built) are matched by
// an import, which builds the index first, a thousand records a transaction;
// the index alone answers from then on, and `stacks check` finds it complete.
func TestSystemNumbersBuiltFromOlderRecords(t *testing.T) {
	forEngines(t, testSystemNumbersBuiltFromOlderRecords)
}

func testSystemNumbersBuiltFromOlderRecords(t *testing.T, e db.Engine) {
	l := newLib(t, e)
	ctx := context.Background()
	const n = 2345
	if err := l.d.Write(ctx, func(tx *db.Tx) error {
		st, err := tx.Prepare(`INSERT INTO records (id, title, marc, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		for i := 1; i <= n; i++ {
			title := fmt.Sprintf("Older %d", i)
			src, err := marc.ToXML(sbib(title, sdf("035", 'a', fmt.Sprintf("(OCoLC)ocm%08d", i))))
			if err != nil {
				return err
			}
			if _, err := st.Exec(i, title, src, db.FormatTime(l.now), db.FormatTime(l.now)); err != nil {
				return err
			}
		}
		_, err = tx.Exec(`UPDATE catalog_derived SET built = 0 WHERE name = 'record_system_numbers'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	match := func() (rule string, id int64) {
		t.Helper()
		m := catalog.NewMatcher()
		if err := l.d.Read(ctx, func(tx *db.Tx) error {
			return m.Prefetch(tx, []*marc.Record{sbib("Incoming", sdf("035", 'a', "(OCoLC)2001"))})
		}); err != nil {
			t.Fatal(err)
		}
		rule, id, _ = m.Match(sbib("Incoming", sdf("035", 'a', "(OCoLC)2001")))
		return rule, id
	}
	batch, err := catalog.StageImport(ctx, l.d, iso(t, sbib("Incoming", sdf("035", 'a', "(OCoLC)2001"))),
		catalog.StageOptions{Actor: editor, FileName: "f.mrc", Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.staged(batch, catalog.RuleSystem); len(got) != 1 || got[0].MatchID != 2001 {
		t.Errorf("the first import after the upgrade matched %+v by 035, want record 2001", got)
	}
	if got := l.int(`SELECT count(*) FROM record_system_numbers`); got != n {
		t.Errorf("%d index rows for %d records", got, n)
	}
	if got := l.int(`SELECT built FROM catalog_derived WHERE name = 'record_system_numbers'`); got != 1 {
		t.Errorf("the index is not marked built (%d)", got)
	}
	l.wantSystemNumbers("built", 2001, "2001")
	if rule, id := match(); rule != catalog.RuleSystem || id != 2001 {
		t.Errorf("after the build: matched %q %d, want record 2001 by 035", rule, id)
	}
	// The index alone answers: a row taken out of it is a record the
	// matcher no longer finds.
	l.exec(`DELETE FROM record_system_numbers WHERE record_id = 2001`)
	if rule, id := match(); id != 0 {
		t.Errorf("matched %q %d from the MARC, want the index alone read", rule, id)
	}
}
