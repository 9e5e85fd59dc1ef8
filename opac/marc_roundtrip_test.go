package opac_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// publicLines is r's leader (without the lengths a writer computes) and its
// fields in the mnemonic syntax, without the fields a harvest leaves out
// (holdings, 9XX, private 541/561/583) or adds (852 copies).
func publicLines(r *marc.Record) []string {
	out := []string{r.Leader[5:12] + r.Leader[17:]}
	for _, f := range r.Fields {
		switch {
		case f.Tag == "852" || f.Tag[0] == '9':
		case (f.Tag == "541" || f.Tag == "561" || f.Tag == "583") && f.Ind1 == '0':
		default:
			out = append(out, marc.FormatField(f))
		}
	}
	return out
}

// yazReads checks that yaz-marcdump, when installed, reads a MARCXML record
// with its edits.
func yazReads(t *testing.T, record string) {
	t.Helper()
	yaz, err := exec.LookPath("yaz-marcdump")
	if err != nil {
		return
	}
	path := filepath.Join(t.TempDir(), "record.xml")
	if err := os.WriteFile(path, []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(yaz, "-i", "marcxml", "-o", "line", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Harvested after editing.") || !strings.Contains(string(out), "Corrected ") {
		t.Errorf("yaz-marcdump: %v\n%s", err, out)
	}
}

// TestOAIMARCRoundTrip imports the real MARC files, edits each record through
// the quick form (title corrected) and the MARC editor (a 500 added, a 700
// removed), and checks that GetRecord serves each record differing from the
// imported one by exactly those edits.
func TestOAIMARCRoundTrip(t *testing.T) {
	dir := filepath.Join("..", "catalog", "marc", "testdata")
	for _, name := range []string{"microlif.001", "specials.001", "zebra-sample.mrc", "sandburg-1.xml"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			actor := stacks.Actor{Name: "cataloguer"}
			var before int64
			err := e.DB.Read(ctx, func(tx *db.Tx) error {
				return tx.QueryRow(`SELECT coalesce(max(id), 0) FROM records`).Scan(&before)
			})
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rr, err := marc.NewAutoReader(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := catalog.Import(ctx, e.DB, rr, catalog.ImportOptions{Actor: actor, Branch: "CEN", ItemType: "BOOK", GenerateItems: true}); err != nil {
				t.Fatal(err)
			}
			want := map[int64]*marc.Record{}
			err = e.DB.Write(ctx, func(tx *db.Tx) error {
				rows, err := tx.Query(`SELECT id FROM records WHERE id > ? ORDER BY id`, before)
				if err != nil {
					return err
				}
				var ids []int64
				for rows.Next() {
					var id int64
					if err := rows.Scan(&id); err != nil {
						rows.Close()
						return err
					}
					ids = append(ids, id)
				}
				rows.Close()
				for _, id := range ids {
					orig, err := catalog.RecordMARC(tx, id)
					if err != nil {
						return err
					}
					in, err := catalog.RecordInputOf(tx, id)
					if err != nil {
						return err
					}
					in.Title = "Corrected " + in.Title
					if err := catalog.UpdateRecord(tx, actor, id, in); err != nil {
						return err
					}
					rec, err := catalog.RecordMARC(tx, id)
					if err != nil {
						return err
					}
					var text []string
					removed := false
					for _, line := range strings.Split(marc.FormatText(rec), "\n") {
						if !removed && strings.HasPrefix(line, "=700") {
							removed = true
							continue
						}
						text = append(text, line)
					}
					text = append(text, `=500  \\$aHarvested after editing.`)
					edited, errs := marc.ParseText(strings.Join(text, "\n"))
					if errs != nil {
						t.Fatalf("record %d: %v", id, errs)
					}
					if err := catalog.SaveMARC(tx, actor, id, edited); err != nil {
						return err
					}
					w := &marc.Record{Leader: orig.Leader, Fields: slices.Clone(orig.Fields)}
					i := slices.IndexFunc(w.Fields, func(f marc.Field) bool { return f.Tag == "245" })
					f := w.Fields[i]
					f.Subfields = slices.Clone(f.Subfields)
					for k, s := range f.Subfields {
						if s.Code == 'a' {
							f.Subfields[k].Value = "Corrected " + s.Value
							break
						}
					}
					w.Fields[i] = f
					if j := slices.IndexFunc(w.Fields, func(f marc.Field) bool { return f.Tag == "700" }); j >= 0 {
						w.Fields = slices.Delete(w.Fields, j, j+1)
					}
					w.Fields = append(w.Fields, marc.Field{Tag: "500", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: "Harvested after editing."}}})
					want[id] = w
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("nothing imported")
			}
			for id, w := range want {
				r, code := e.oai(t, "verb=GetRecord&metadataPrefix=marc21&identifier=oai:stacks:"+strconv.FormatInt(id, 10))
				if code != "" {
					t.Fatalf("record %d: OAI error %s", id, code)
				}
				start := strings.Index(r.Body, `<record xmlns="`+marc.Namespace+`">`)
				end := strings.Index(r.Body, "</metadata>")
				if start < 0 || end < start {
					t.Fatalf("record %d: no MARCXML record in\n%s", id, r.Body)
				}
				got, err := marc.NewXMLReader(strings.NewReader(r.Body[start:end])).Next()
				if err != nil {
					t.Fatalf("record %d: %v", id, err)
				}
				if g, w := publicLines(got), publicLines(w); !slices.Equal(g, w) {
					t.Errorf("record %d harvested:\n%s\nwant\n%s", id, strings.Join(g, "\n"), strings.Join(w, "\n"))
				}
				if !slices.ContainsFunc(got.Fields, func(f marc.Field) bool { return f.Tag == "852" }) {
					t.Errorf("record %d harvested without its copies", id)
				}
				yazReads(t, r.Body[start:end])
			}
		})
	}
}
