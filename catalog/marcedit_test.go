package catalog_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// holdingsTag reports the fields Export replaces with the current copies.
func holdingsTag(tag string) bool { return tag == "952" || tag == "852" || tag == "949" }

// withoutHoldings is r's fields in the mnemonic syntax without its holdings
// fields, and its leader without the lengths a writer computes.
func withoutHoldings(r *marc.Record) []string {
	out := []string{r.Leader[5:12] + r.Leader[17:]}
	for _, f := range r.Fields {
		if !holdingsTag(f.Tag) {
			out = append(out, marc.FormatField(f))
		}
	}
	return out
}

// roundTripEdit edits record id as a cataloguer would: the title corrected in
// the quick form, then, in the MARC editor's text, a 500 added and the first
// 700 (if any) removed. It returns the record as it should then be.
func roundTripEdit(t *testing.T, d *db.DB, id int64) *marc.Record {
	t.Helper()
	var want *marc.Record
	mustWriteTx(t, d, func(tx *db.Tx) error {
		orig, err := catalog.RecordMARC(tx, id)
		if err != nil {
			return err
		}
		in, err := catalog.RecordInputOf(tx, id)
		if err != nil {
			return err
		}
		in.Title = "Corrected " + in.Title
		if err := catalog.UpdateRecord(tx, editor, id, in); err != nil {
			return err
		}
		// What the quick form should have changed: 245 $a, nothing else.
		want = &marc.Record{Leader: orig.Leader, Fields: slices.Clone(orig.Fields)}
		i := slices.IndexFunc(want.Fields, func(f marc.Field) bool { return f.Tag == "245" })
		f := want.Fields[i]
		f.Subfields = slices.Clone(f.Subfields)
		for k, s := range f.Subfields {
			if s.Code == 'a' {
				f.Subfields[k].Value = "Corrected " + s.Value
				break
			}
		}
		want.Fields[i] = f

		rec, err := catalog.RecordMARC(tx, id)
		if err != nil {
			return err
		}
		if got, w := withoutHoldings(rec), withoutHoldings(want); !slices.Equal(got, w) {
			t.Errorf("record %d after the quick form:\n%s\nwant\n%s", id, strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
		// The MARC editor: its text, lines added and removed.
		var edited []string
		added, removed := false, false
		for _, line := range strings.Split(marc.FormatText(rec), "\n") {
			if line == "" {
				continue
			}
			if !added && line[1:4] > "500" && line[1:4] != "LDR" {
				edited = append(edited, `=500  \\$aRound trip note: {dollar}5 is not a subfield.`)
				added = true
			}
			if !removed && strings.HasPrefix(line, "=700") {
				removed = true
				continue
			}
			edited = append(edited, line)
		}
		if !added {
			edited = append(edited, `=500  \\$aRound trip note: {dollar}5 is not a subfield.`)
		}
		saved, errs := marc.ParseText(strings.Join(edited, "\n"))
		if errs != nil {
			t.Fatalf("record %d: the editor's text does not parse: %v", id, errs)
		}
		note := marc.Field{Tag: "500", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: "Round trip note: $5 is not a subfield."}}}
		at := slices.IndexFunc(want.Fields, func(f marc.Field) bool { return f.Tag > "500" })
		if at < 0 {
			at = len(want.Fields)
		}
		want.Fields = slices.Insert(want.Fields, at, note)
		if j := slices.IndexFunc(want.Fields, func(f marc.Field) bool { return f.Tag == "700" }); j >= 0 {
			want.Fields = slices.Delete(want.Fields, j, j+1)
		}
		return catalog.SaveMARC(tx, editor, id, saved)
	})
	return want
}

// TestMARCRoundTrip imports every record of the real files, edits each through
// the quick form and the MARC editor, exports the catalogue, and checks that
// each exported record differs from the imported one by exactly the edits (and
// that yaz-marcdump reads the export).
func TestMARCRoundTrip(t *testing.T) { forEngines(t, testMARCRoundTrip) }

func testMARCRoundTrip(t *testing.T, eng db.Engine) {
	for _, tc := range marcFiles {
		t.Run(tc.name, func(t *testing.T) {
			d := marcDB(t, eng)
			ctx := context.Background()
			var before int64
			mustWriteTx(t, d, func(tx *db.Tx) error {
				return tx.QueryRow(`SELECT coalesce(max(id), 0) FROM records`).Scan(&before)
			})
			importFile(t, d, testdata(tc.name))
			var ids []int64
			mustWriteTx(t, d, func(tx *db.Tx) error {
				rows, err := tx.Query(`SELECT id FROM records WHERE id > ? ORDER BY id`, before)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var id int64
					if err := rows.Scan(&id); err != nil {
						return err
					}
					ids = append(ids, id)
				}
				return rows.Err()
			})
			if len(ids) != tc.records {
				t.Fatalf("%d records imported, want %d", len(ids), tc.records)
			}
			want := map[int64]*marc.Record{}
			for _, id := range ids {
				want[id] = roundTripEdit(t, d, id)
			}

			var buf bytes.Buffer
			n, err := catalog.Export(ctx, d, &buf, catalog.FormatISO2709)
			if err != nil {
				t.Fatal(err)
			}
			rr := marc.NewReader(bytes.NewReader(buf.Bytes()))
			var exported []*marc.Record
			for range n {
				rec, err := rr.Next()
				if err != nil {
					t.Fatal(err)
				}
				exported = append(exported, rec)
			}
			// Export writes in id order: the imported records come last.
			exported = exported[len(exported)-len(ids):]
			for k, id := range ids {
				got, w := withoutHoldings(exported[k]), withoutHoldings(want[id])
				if !slices.Equal(got, w) {
					t.Errorf("record %d exported:\n%s\nwant\n%s", id, strings.Join(got, "\n"), strings.Join(w, "\n"))
				}
				copies := 0
				for _, f := range exported[k].Fields {
					if f.Tag == "952" {
						copies++
					}
				}
				if copies == 0 {
					t.Errorf("record %d exported without its copies", id)
				}
			}

			yaz, err := exec.LookPath("yaz-marcdump")
			if err != nil {
				t.Log("yaz-marcdump is not installed: the export is not checked with it")
				return
			}
			path := filepath.Join(t.TempDir(), "export.mrc")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(yaz, "-i", "marc", "-o", "line", path).CombinedOutput()
			if err != nil {
				t.Fatalf("yaz-marcdump: %v\n%s", err, out)
			}
			if c := strings.Count(string(out), "\n245 "); c != n {
				t.Errorf("yaz-marcdump reads %d records with a 245, want %d", c, n)
			}
			for _, id := range ids {
				if !strings.Contains(string(out), "Round trip note: $5 is not a subfield.") {
					t.Fatalf("yaz-marcdump does not show record %d's added 500", id)
				}
			}
		})
	}
}
