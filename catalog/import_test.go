package catalog_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// marcFiles are the real MARC files of shared/marc (copied, with their provenance,
// into catalog/marc/testdata), with the record counts yaz-marcdump gives.
var marcFiles = []struct {
	name             string
	records, rejects int
}{
	{"microlif.001", 18, 0},
	{"specials.001", 14, 0},
	{"zebra-sample.mrc", 24, 2}, // two empty records from trailing terminators
	{"sandburg-1.xml", 1, 0},
}

func testdata(name string) string { return filepath.Join("marc", "testdata", name) }

func importFile(t testing.TB, d *db.DB, path string) catalog.ImportSummary {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rr, err := marc.NewAutoReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := catalog.Import(context.Background(), d, rr, catalog.ImportOptions{
		Actor: stacks.Actor{Name: "test"}, Branch: "CEN", ItemType: "BOOK", GenerateItems: true, BatchSize: 7})
	if err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	return sum
}

// yazCount counts the records yaz-marcdump reads, when yaz is installed.
func yazCount(t *testing.T, path string) (int, bool) {
	yaz, err := exec.LookPath("yaz-marcdump")
	if err != nil {
		return 0, false
	}
	in := "marc"
	if strings.HasSuffix(path, ".xml") {
		in = "marcxml"
	}
	out, err := exec.Command(yaz, "-i", in, "-o", "marcxml", path).Output()
	if err != nil && len(out) == 0 {
		t.Logf("yaz-marcdump %s: %v", path, err)
		return 0, false
	}
	return strings.Count(string(out), "<record"), true
}

func TestImportRealFiles(t *testing.T) {
	for _, tc := range marcFiles {
		t.Run(tc.name, func(t *testing.T) {
			d := mustDemoDB(t)
			sum := importFile(t, d, testdata(tc.name))
			if sum.Read != tc.records+tc.rejects || sum.Created != tc.records || sum.Rejected != tc.rejects || sum.Updated != 0 {
				t.Fatalf("summary %+v, want %d created and %d rejected", sum, tc.records, tc.rejects)
			}
			for _, r := range sum.Rejections {
				if r.Reason == "" || (r.Offset == 0 && r.Title == "") {
					t.Errorf("rejection without position or reason: %+v", r)
				}
			}
			if n, ok := yazCount(t, testdata(tc.name)); ok && n != tc.records {
				t.Errorf("yaz-marcdump reads %d records in %s, we imported %d", n, tc.name, tc.records)
			}
			// Importing again updates, never duplicates, except records with nothing
			// to know them by: no ISBN, no control number, no copy's barcode.
			anonymous := anonymousRecords(t, testdata(tc.name))
			again := importFile(t, d, testdata(tc.name))
			if again.Created != anonymous || again.Updated != tc.records-anonymous || again.ItemsSkipped != 0 {
				t.Fatalf("second import %+v: want %d updated, %d created", again, tc.records-anonymous, anonymous)
			}
		})
	}
}

// anonymousRecords counts the records of a file that carry no ISBN, control number
// or copy barcode.
func anonymousRecords(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rr, err := marc.NewAutoReader(f)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		rec, err := rr.Next()
		if err == io.EOF {
			return n
		} else if err != nil {
			continue
		}
		b := catalog.BibOf(rec)
		known := b.ISBN != "" || b.ControlNumber != ""
		for _, h := range catalog.HoldingsOf(rec) {
			known = known || h.Barcode != ""
		}
		if !known {
			n++
		}
	}
}

func TestImportMapping(t *testing.T) {
	d := mustDemoDB(t)
	importFile(t, d, testdata("sandburg-1.xml"))
	var res catalog.SearchResult
	var rec *catalog.Record
	var items []catalog.CopyStatus
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		if res, err = catalog.Search(tx, catalog.SearchQuery{Text: "author:sandburg title:arithmetic"}); err != nil || len(res.Hits) != 1 {
			return err
		}
		rec, items, err = catalog.FindRecord(tx, res.Hits[0].RecordID)
		return err
	})
	if err != nil || rec == nil {
		t.Fatalf("the imported record is not found by author and title: %v %+v", err, res)
	}
	if rec.Title != "Arithmetic" || rec.Author != "Sandburg, Carl" || rec.ISBN != "0152038655" || rec.Year != 1993 ||
		rec.Publisher != "Harcourt Brace Jovanovich" || len(rec.Subjects) < 3 || rec.Subjects[0] != "Arithmetic -- Juvenile poetry" {
		t.Errorf("mapped %+v", rec)
	}
	if len(items) != 1 || !strings.HasPrefix(items[0].Barcode, "M") || items[0].HomeBranchName != "Central" {
		t.Errorf("generated copy %+v", items)
	}
	// The source record is kept whole, as MARCXML.
	var source string
	d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT marc FROM records WHERE id = ?`, rec.ID).Scan(&source)
	})
	if !strings.Contains(source, `tag="245"`) || !strings.Contains(source, "Arithmetic") {
		t.Errorf("source record not kept: %.200s", source)
	}
}

func TestImportHoldings(t *testing.T) {
	d := mustDemoDB(t)
	rec := &marc.Record{Leader: "00000nam a2200000 a 4500", Fields: []marc.Field{
		{Tag: "001", Value: "h-1"},
		{Tag: "245", Ind1: '1', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: "Holdings test :"}, {Code: 'b', Value: "a subtitle /"}}},
		{Tag: "952", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: "EAS"}, {Code: 'c', Value: " Reference "}, {Code: 'o', Value: "QA 1 .H6"}, {Code: 'p', Value: "HB0001"}, {Code: 'y', Value: "DVD"}, {Code: 'g', Value: "12.50"}}},
		{Tag: "952", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: "NOWHERE"}, {Code: 'c', Value: strings.Repeat("Stack ", 10)}, {Code: 'p', Value: "HB0002"}}},
		{Tag: "952", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: "CEN"}, {Code: 'p', Value: "I00001"}}}, // a fixture's barcode
	}}
	var buf bytes.Buffer
	if err := marc.WriteISO2709(&buf, rec); err != nil {
		t.Fatal(err)
	}
	sum, err := catalog.Import(context.Background(), d, marc.NewReader(&buf), catalog.ImportOptions{Actor: stacks.Actor{Name: "test"}, Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Created != 1 || sum.ItemsCreated != 2 || sum.ItemsSkipped != 1 {
		t.Fatalf("summary %+v: want 2 copies and the fixture's barcode skipped", sum)
	}
	var got string
	d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT r.title || '|' || string_agg(i.barcode || ':' || b.code || ':' || t.code || ':' || i.call_number || ':' || i.location || ':' || i.price_cents, ',' ORDER BY i.barcode)
			FROM records r JOIN items i ON i.record_id = r.id JOIN branches b ON b.id = i.home_branch_id JOIN item_types t ON t.id = i.item_type_id
			WHERE r.control_number = 'h-1' GROUP BY r.id`).Scan(&got)
	})
	if got != "Holdings test: a subtitle|HB0001:EAS:DVD:QA 1 .H6:Reference:1250,HB0002:CEN:BOOK::Stack Stack Stack Stack Stack Stack Stac:0" {
		t.Errorf("imported %q", got)
	}
}

func TestImportBadOptions(t *testing.T) {
	d := mustDemoDB(t)
	f, _ := os.Open(testdata("sandburg-1.xml"))
	defer f.Close()
	rr, _ := marc.NewAutoReader(f)
	_, err := catalog.Import(context.Background(), d, rr, catalog.ImportOptions{Branch: "XXX", ItemType: "BOOK"})
	if stacks.ErrorCode(err) != stacks.EINVALID {
		t.Fatalf("unknown branch: %v", err)
	}
}

// dumpCatalogue lists every record and copy as text, for comparing two databases.
func dumpCatalogue(t *testing.T, d *db.DB) string {
	t.Helper()
	var out strings.Builder
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT r.title, r.author, r.isbn, r.publisher, coalesce(r.year, 0), r.subjects, r.control_number,
				coalesce((SELECT string_agg(i.barcode || ':' || hb.code || ':' || t.code || ':' || i.call_number || ':' || i.location || ':' || i.price_cents, ';' ORDER BY i.barcode)
					FROM items i JOIN branches hb ON hb.id = i.home_branch_id JOIN item_types t ON t.id = i.item_type_id
					WHERE i.record_id = r.id), '')
			FROM records r ORDER BY r.title, r.control_number, r.isbn, r.id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var title, author, isbn, pub, subjects, control, items string
			var year int
			if err := rows.Scan(&title, &author, &isbn, &pub, &year, &subjects, &control, &items); err != nil {
				return err
			}
			out.WriteString(strings.Join([]string{title, author, isbn, pub, strings.ReplaceAll(subjects, "\n", "|"), control, items}, " / "))
			out.WriteString("\n")
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestExportImportRoundTrip(t *testing.T) {
	src := mustDemoDB(t)
	for _, tc := range marcFiles {
		importFile(t, src, testdata(tc.name))
	}
	// A record edited by hand exports its new fields.
	err := src.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE records SET title = 'Arithmetic, revised', author = 'Sandburg, C.' WHERE isbn = '0152038655'`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := dumpCatalogue(t, src)
	for _, format := range []string{catalog.FormatMARCXML, catalog.FormatISO2709} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			n, err := catalog.Export(context.Background(), src, &buf, format)
			if err != nil {
				t.Fatal(err)
			}
			if n < 57 {
				t.Fatalf("exported %d records", n)
			}
			dst := mustEmptyLibrary(t)
			rr, err := marc.NewAutoReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := catalog.Import(context.Background(), dst, rr, catalog.ImportOptions{Actor: stacks.Actor{Name: "test"}, Branch: "CEN", ItemType: "BOOK"})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Rejected != 0 || sum.ItemsSkipped != 0 {
				t.Fatalf("re-import %+v: %+v", sum, sum.Rejections)
			}
			if got := dumpCatalogue(t, dst); got != want {
				t.Fatalf("export then import differs:\n%s", firstDiff(want, got))
			}
		})
	}
}

// mustEmptyLibrary is a library with the demo's branches and item types and no
// catalogue, for re-importing an export.
func mustEmptyLibrary(t testing.TB) *db.DB {
	t.Helper()
	d := mustDemoDB(t)
	err := d.Write(context.Background(), func(tx *db.Tx) error {
		for _, q := range []string{`DELETE FROM checkins`, `DELETE FROM ledger`, `DELETE FROM holds`, `DELETE FROM loans`, `DELETE FROM items`, `DELETE FROM records`} {
			if _, err := tx.Exec(q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "want: " + al[i] + "\n got: " + bl[i]
		}
	}
	return "lengths differ"
}
