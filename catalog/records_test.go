package catalog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// editor is the actor of the record and item edits under test.
var editor = stacks.Actor{Name: "desk", BranchID: 1}

func TestRecordInputValidate(t *testing.T) {
	ok := catalog.RecordInput{Title: "Kindred"}
	for _, tc := range []struct {
		name  string
		edit  func(in *catalog.RecordInput)
		field string // "" for valid input
	}{
		{"OK", func(in *catalog.RecordInput) {}, ""},
		{"OKAllFields", func(in *catalog.RecordInput) {
			*in = catalog.RecordInput{Title: "Dune", Author: "Herbert, Frank", ISBN: "978-0-441-17271-9", Publisher: "Chilton", Year: "1965", Subjects: "Science fiction\r\nDune (Imaginary place) -- Fiction"}
		}, ""},
		{"OKISBN10WithX", func(in *catalog.RecordInput) { in.ISBN = "0-8044-2957-x" }, ""},
		{"OKYear1", func(in *catalog.RecordInput) { in.Year = "1" }, ""},
		{"OKYear9999", func(in *catalog.RecordInput) { in.Year = "9999" }, ""},
		{"ErrTitleEmpty", func(in *catalog.RecordInput) { in.Title = "   " }, "title"},
		{"ErrTitleTooLong", func(in *catalog.RecordInput) { in.Title = strings.Repeat("é", 1001) }, "title"},
		{"OKTitle1000", func(in *catalog.RecordInput) { in.Title = strings.Repeat("é", 1000) }, ""},
		{"ErrTitleNewline", func(in *catalog.RecordInput) { in.Title = "Two\nlines" }, "title"},
		{"ErrTitleInvalidUTF8", func(in *catalog.RecordInput) { in.Title = "Bad \xff" }, "title"},
		{"ErrAuthorControl", func(in *catalog.RecordInput) { in.Author = "Tab\there" }, "author"},
		{"ErrPublisherControl", func(in *catalog.RecordInput) { in.Publisher = "Bell\x07" }, "publisher"},
		{"ErrISBNLength", func(in *catalog.RecordInput) { in.ISBN = "12345" }, "isbn"},
		{"ErrISBNLetters", func(in *catalog.RecordInput) { in.ISBN = "97804414781AB" }, "isbn"},
		{"ErrISBN13WithX", func(in *catalog.RecordInput) { in.ISBN = "978044147812X" }, "isbn"},
		{"ErrISBNXNotLast", func(in *catalog.RecordInput) { in.ISBN = "08044X2957" }, "isbn"},
		{"ErrYearZero", func(in *catalog.RecordInput) { in.Year = "0" }, "year"},
		{"ErrYearTooBig", func(in *catalog.RecordInput) { in.Year = "10000" }, "year"},
		{"ErrYearNegative", func(in *catalog.RecordInput) { in.Year = "-5" }, "year"},
		{"ErrYearWord", func(in *catalog.RecordInput) { in.Year = "circa 1900" }, "year"},
		{"ErrSubjectsControl", func(in *catalog.RecordInput) { in.Subjects = "Fiction\n\x00Poetry" }, "subjects"},
		{"ErrSubjectsInvalidUTF8", func(in *catalog.RecordInput) { in.Subjects = "Fiction\n\xc3" }, "subjects"},
		{"ErrTitleNonXML", func(in *catalog.RecordInput) { in.Title = "Bad \uFFFE title" }, "title"},
		{"ErrAuthorNonXML", func(in *catalog.RecordInput) { in.Author = "Nobody\uFFFF" }, "author"},
		{"ErrSubjectsNonXML", func(in *catalog.RecordInput) { in.Subjects = "Fiction\n\uFFFE" }, "subjects"},
		{"ErrSubjectTooLong", func(in *catalog.RecordInput) { in.Subjects = strings.Repeat("a", 501) }, "subjects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := ok
			tc.edit(&in)
			err := in.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != tc.field {
				t.Fatalf("Validate: %v (field %q), want EINVALID on %q", err, stacks.ErrorField(err), tc.field)
			}
			if msg := stacks.ErrorMessage(err); msg == "" || strings.Contains(msg, "stacks error") {
				t.Errorf("message %q is not for people", msg)
			}
		})
	}

	t.Run("Normalizes", func(t *testing.T) {
		in := catalog.RecordInput{Title: "  Dune ", ISBN: " 0-8044-2957-x ", Year: " 1965 ", Subjects: "\r\n  Science fiction  \r\n\r\nDune -- Fiction\r\n"}
		if err := in.Validate(); err != nil {
			t.Fatal(err)
		}
		want := catalog.RecordInput{Title: "Dune", ISBN: "080442957X", Year: "1965", Subjects: "Science fiction\nDune -- Fiction"}
		if in != want {
			t.Fatalf("normalized %+v, want %+v", in, want)
		}
	})
}

// mustWriteTx runs fn in a write transaction, failing the test on error.
func mustWriteTx(t *testing.T, d *db.DB, fn func(tx *db.Tx) error) {
	t.Helper()
	if err := d.Write(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// writeTx runs fn in a write transaction and returns its error.
func writeTx(d *db.DB, fn func(tx *db.Tx) error) error {
	return d.Write(context.Background(), fn)
}

func searchTotal(t *testing.T, d *db.DB, text string) int {
	t.Helper()
	var res catalog.SearchResult
	err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
		res, err = catalog.Search(tx, catalog.SearchQuery{Text: text})
		return err
	})
	if err != nil {
		t.Fatalf("Search(%q): %v", text, err)
	}
	return res.Total
}

func auditCount(t *testing.T, d *db.DB, action string, objectID int64) int {
	t.Helper()
	var n int
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM audit_log WHERE action = ? AND object_id = ? AND actor = 'desk'`, action, objectID).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateUpdateRecord(t *testing.T) {
	d := mustDemoDB(t)
	var id int64
	mustWriteTx(t, d, func(tx *db.Tx) (err error) {
		id, err = catalog.CreateRecord(tx, editor, catalog.RecordInput{
			Title: "Quixotic Zeppelins", Author: "Vantongeren, Ilse", ISBN: "978-1-4028-9462-6",
			Publisher: "Airship Press", Year: "2024", Subjects: "Airships -- History\r\nAeronautics",
		})
		return err
	})

	t.Run("Create", func(t *testing.T) {
		var rec *catalog.Record
		var items []catalog.CopyStatus
		err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
			rec, items, err = catalog.FindRecord(tx, id)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := catalog.Record{ID: id, Title: "Quixotic Zeppelins", Author: "Vantongeren, Ilse", ISBN: "9781402894626",
			Publisher: "Airship Press", Year: 2024, Subjects: []string{"Airships -- History", "Aeronautics"}}
		if rec.Title != want.Title || rec.Author != want.Author || rec.ISBN != want.ISBN || rec.Publisher != want.Publisher ||
			rec.Year != want.Year || strings.Join(rec.Subjects, "|") != strings.Join(want.Subjects, "|") || len(items) != 0 {
			t.Fatalf("record %+v with %d items, want %+v", rec, len(items), want)
		}
		if n := auditCount(t, d, "record.create", id); n != 1 {
			t.Errorf("%d record.create audit rows, want 1", n)
		}
	})

	t.Run("SearchFindsIt", func(t *testing.T) {
		for _, q := range []string{"zeppelin", "author:vantongeren", "subject:aeronautics", "isbn:9781402894626"} {
			if n := searchTotal(t, d, q); n != 1 {
				t.Errorf("search %q: %d hits, want 1", q, n)
			}
		}
	})

	t.Run("Update", func(t *testing.T) {
		mustWriteTx(t, d, func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE records SET marc = '<record>source</record>', control_number = 'ocm1' WHERE id = ?`, id)
			return err
		})
		later := "2026-12-01T09:00:00Z"
		d.Now = func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }
		mustWriteTx(t, d, func(tx *db.Tx) error {
			return catalog.UpdateRecord(tx, editor, id, catalog.RecordInput{Title: "Quixotic Dirigibles", Author: "Vantongeren, Ilse", Year: ""})
		})
		var title, isbn, subjects, marc, control, updated string
		var year *int64
		err := d.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT title, isbn, subjects, year, marc, control_number, updated_at FROM records WHERE id = ?`, id).
				Scan(&title, &isbn, &subjects, &year, &marc, &control, &updated)
		})
		if err != nil {
			t.Fatal(err)
		}
		if title != "Quixotic Dirigibles" || isbn != "" || subjects != "" || year != nil || updated != later {
			t.Errorf("after update: title %q isbn %q subjects %q year %v updated %s", title, isbn, subjects, year, updated)
		}
		// The unreadable source is replaced by MARC made from the fields, the edit
		// written through; the control number is kept.
		if !strings.Contains(marc, `<subfield code="a">Quixotic Dirigibles</subfield>`) || !strings.Contains(marc, `<controlfield tag="001">ocm1</controlfield>`) ||
			strings.Contains(marc, "Airship Press") || control != "ocm1" {
			t.Errorf("the MARC does not follow the edit: %q, control number %q", marc, control)
		}
		if searchTotal(t, d, "dirigibles") != 1 || searchTotal(t, d, "zeppelin") != 0 || searchTotal(t, d, "subject:aeronautics") != 0 {
			t.Error("the search index does not follow the update")
		}
		var detail string
		d.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT detail FROM audit_log WHERE action = 'record.update' AND object_id = ?`, id).Scan(&detail)
		})
		if !strings.Contains(detail, `title "Quixotic Zeppelins" -> "Quixotic Dirigibles"`) || !strings.Contains(detail, `year "2024" -> ""`) || strings.Contains(detail, "author") {
			t.Errorf("audit detail %q", detail)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		err := writeTx(d, func(tx *db.Tx) error {
			return catalog.UpdateRecord(tx, editor, id, catalog.RecordInput{Title: ""})
		})
		if stacks.ErrorField(err) != "title" {
			t.Fatalf("empty title: %v", err)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		err := writeTx(d, func(tx *db.Tx) error {
			return catalog.UpdateRecord(tx, editor, 999999, catalog.RecordInput{Title: "X"})
		})
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("unknown record: %v", err)
		}
	})

	t.Run("InputOf", func(t *testing.T) {
		var in catalog.RecordInput
		err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
			in, err = catalog.RecordInputOf(tx, id)
			return err
		})
		if err != nil || in != (catalog.RecordInput{Title: "Quixotic Dirigibles", Author: "Vantongeren, Ilse", Base: 3}) {
			t.Fatalf("RecordInputOf = %+v, %v", in, err)
		}
	})
}

func TestAddItem(t *testing.T) {
	d := mustDemoDB(t)
	var recordID int64
	mustWriteTx(t, d, func(tx *db.Tx) (err error) {
		recordID, err = catalog.CreateRecord(tx, editor, catalog.RecordInput{Title: "Quixotic Zeppelins"})
		return err
	})
	add := func(in catalog.ItemInput) (int64, error) {
		var id int64
		err := writeTx(d, func(tx *db.Tx) (err error) {
			id, err = catalog.AddItem(tx, editor, recordID, in)
			return err
		})
		return id, err
	}

	t.Run("OK", func(t *testing.T) {
		id, err := add(catalog.ItemInput{Barcode: " Q0001 ", ItemTypeCode: "book", HomeBranchCode: "EAS", CallNumber: " 629.133 VAN ", Price: "24,5"})
		if err != nil {
			t.Fatal(err)
		}
		var it *catalog.Item
		var details *catalog.ItemDetails
		err = d.Read(context.Background(), func(tx *db.Tx) (err error) {
			if it, err = catalog.FindItem(tx, id); err != nil {
				return err
			}
			details, err = catalog.FindItemDetails(tx, id)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if it.Barcode != "Q0001" || it.RecordID != recordID || it.Status != catalog.StatusAvailable || it.HomeBranchName != "Eastside" ||
			it.CurrentBranchID != it.HomeBranchID || it.ItemTypeName != "Book" || it.CallNumber != "629.133 VAN" {
			t.Fatalf("item %+v", it)
		}
		want := catalog.ItemInput{Barcode: "Q0001", ItemTypeCode: "BOOK", HomeBranchCode: "EAS", CallNumber: "629.133 VAN", Price: "24.50"}
		if details.Input != want || details.OnLoan || details.Trapped || details.InCirculation() {
			t.Fatalf("details %+v, want input %+v", details, want)
		}
		if n := auditCount(t, d, "item.create", id); n != 1 {
			t.Errorf("%d item.create audit rows, want 1", n)
		}
		if searchTotal(t, d, "zeppelins") != 1 {
			t.Error("the record is not found")
		}
	})

	t.Run("ErrDuplicateBarcode", func(t *testing.T) {
		_, err := add(catalog.ItemInput{Barcode: "I00001", ItemTypeCode: "BOOK", HomeBranchCode: "CEN"})
		if stacks.ErrorCode(err) != stacks.ECONFLICT || stacks.ErrorField(err) != "barcode" ||
			!strings.Contains(stacks.ErrorMessage(err), "Barcode I00001 is already used by another item") {
			t.Fatalf("duplicate barcode: %v (%s)", err, stacks.ErrorMessage(err))
		}
	})

	for _, tc := range []struct {
		name, field string
		in          catalog.ItemInput
	}{
		{"ErrNoBarcode", "barcode", catalog.ItemInput{Barcode: " ", ItemTypeCode: "BOOK", HomeBranchCode: "CEN"}},
		{"ErrBarcodeControl", "barcode", catalog.ItemInput{Barcode: "Q\x00", ItemTypeCode: "BOOK", HomeBranchCode: "CEN"}},
		{"ErrNoType", "item_type", catalog.ItemInput{Barcode: "Q0002", HomeBranchCode: "CEN"}},
		{"ErrUnknownType", "item_type", catalog.ItemInput{Barcode: "Q0002", ItemTypeCode: "VINYL", HomeBranchCode: "CEN"}},
		{"ErrUnknownBranch", "home_branch", catalog.ItemInput{Barcode: "Q0002", ItemTypeCode: "BOOK", HomeBranchCode: "NOR"}},
		{"ErrCallNumberControl", "call_number", catalog.ItemInput{Barcode: "Q0002", ItemTypeCode: "BOOK", HomeBranchCode: "CEN", CallNumber: "FIC\nAUS"}},
		{"ErrPrice", "price", catalog.ItemInput{Barcode: "Q0002", ItemTypeCode: "BOOK", HomeBranchCode: "CEN", Price: "12.345"}},
		{"ErrPriceNegative", "price", catalog.ItemInput{Barcode: "Q0002", ItemTypeCode: "BOOK", HomeBranchCode: "CEN", Price: "-1"}},
		{"ErrPriceWord", "price", catalog.ItemInput{Barcode: "Q0002", ItemTypeCode: "BOOK", HomeBranchCode: "CEN", Price: "ten"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := add(tc.in)
			if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != tc.field {
				t.Fatalf("%+v: %v (field %q), want EINVALID on %s", tc.in, err, stacks.ErrorField(err), tc.field)
			}
		})
	}

	t.Run("ErrNoRecord", func(t *testing.T) {
		err := writeTx(d, func(tx *db.Tx) error {
			_, err := catalog.AddItem(tx, editor, 999999, catalog.ItemInput{Barcode: "Q0003", ItemTypeCode: "BOOK", HomeBranchCode: "CEN"})
			return err
		})
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("unknown record: %v", err)
		}
	})
}

func TestUpdateItem(t *testing.T) {
	d := mustDemoDB(t)
	ctx := context.Background()
	itemID := func(barcode string) int64 {
		t.Helper()
		var id int64
		if err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT id FROM items WHERE barcode = ?`, barcode).Scan(&id)
		}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	input := func(barcode string) catalog.ItemInput {
		return catalog.ItemInput{Barcode: barcode, ItemTypeCode: "BOOK", HomeBranchCode: "CEN", CallNumber: "FIC X"}
	}
	update := func(id int64, in catalog.ItemInput, status string) error {
		return writeTx(d, func(tx *db.Tx) error { _, err := catalog.UpdateItem(tx, editor, id, in, status); return err })
	}
	status := func(id int64) string {
		t.Helper()
		var it *catalog.Item
		if err := d.Read(ctx, func(tx *db.Tx) (err error) { it, err = catalog.FindItem(tx, id); return err }); err != nil {
			t.Fatal(err)
		}
		return it.Status
	}

	t.Run("StatusRules", func(t *testing.T) {
		for _, tc := range []struct {
			name, from, to string
			code           string // "" when allowed
		}{
			{"AvailableToLost", catalog.StatusAvailable, catalog.StatusLost, ""},
			{"AvailableToMissing", catalog.StatusAvailable, catalog.StatusMissing, ""},
			{"AvailableToWithdrawn", catalog.StatusAvailable, catalog.StatusWithdrawn, ""},
			{"LostToAvailable", catalog.StatusLost, catalog.StatusAvailable, ""},
			{"WithdrawnToAvailable", catalog.StatusWithdrawn, catalog.StatusAvailable, ""},
			{"OnLoanKept", catalog.StatusOnLoan, catalog.StatusOnLoan, ""},
			{"OnLoanKeptWhenEmpty", catalog.StatusOnLoan, "", ""},
			{"ErrOnLoanToWithdrawn", catalog.StatusOnLoan, catalog.StatusWithdrawn, stacks.ECONFLICT},
			{"ErrOnLoanToAvailable", catalog.StatusOnLoan, catalog.StatusAvailable, stacks.ECONFLICT},
			{"ErrOnHoldShelfToLost", catalog.StatusOnHoldShelf, catalog.StatusLost, stacks.ECONFLICT},
			{"ErrInTransitToMissing", catalog.StatusInTransit, catalog.StatusMissing, stacks.ECONFLICT},
			{"ErrAvailableToOnLoan", catalog.StatusAvailable, catalog.StatusOnLoan, stacks.EINVALID},
			{"ErrAvailableToInTransit", catalog.StatusAvailable, catalog.StatusInTransit, stacks.EINVALID},
			{"ErrUnknownStatus", catalog.StatusAvailable, "stolen", stacks.EINVALID},
		} {
			t.Run(tc.name, func(t *testing.T) {
				id := itemID("I00003")
				mustWriteTx(t, d, func(tx *db.Tx) error { return catalog.SetItemStatus(tx, id, tc.from) })
				err := update(id, input("I00003"), tc.to)
				want := tc.to
				if want == "" {
					want = tc.from
				}
				if tc.code == "" {
					if err != nil {
						t.Fatalf("%s -> %s: %v", tc.from, tc.to, err)
					}
				} else {
					if stacks.ErrorCode(err) != tc.code || stacks.ErrorField(err) != "status" {
						t.Fatalf("%s -> %s: %v, want %s on status", tc.from, tc.to, err, tc.code)
					}
					want = tc.from
				}
				if got := status(id); got != want {
					t.Errorf("status is %s, want %s", got, want)
				}
			})
		}
	})

	t.Run("ErrCurrentLoanWhateverTheStatus", func(t *testing.T) {
		id := itemID("I00004")
		mustWriteTx(t, d, func(tx *db.Tx) error {
			_, err := tx.Exec(`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at)
				VALUES (?, (SELECT min(id) FROM patrons), 1, '2026-11-30T10:00:00Z', '2026-12-21T20:00:00Z')`, id)
			return err
		})
		err := update(id, input("I00004"), catalog.StatusWithdrawn)
		if stacks.ErrorCode(err) != stacks.ECONFLICT || !strings.Contains(stacks.ErrorMessage(err), "Item I00004 is checked out") {
			t.Fatalf("withdrawing an item on loan: %v", err)
		}
	})

	t.Run("OKDetails", func(t *testing.T) {
		id := itemID("I00005")
		in := catalog.ItemInput{Barcode: "I00005-B", ItemTypeCode: "DVD", HomeBranchCode: "WES", CallNumber: "DVD TOL", Price: "9.99"}
		if err := update(id, in, catalog.StatusMissing); err != nil {
			t.Fatal(err)
		}
		var got *catalog.ItemDetails
		if err := d.Read(ctx, func(tx *db.Tx) (err error) { got, err = catalog.FindItemDetails(tx, id); return err }); err != nil {
			t.Fatal(err)
		}
		if got.Input != in || got.Status != catalog.StatusMissing || got.HomeBranchName != "Westside" || got.HomeBranchID == got.CurrentBranchID {
			t.Fatalf("after update: %+v", got)
		}
		var detail string
		d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT detail FROM audit_log WHERE action = 'item.update' AND object_id = ? AND actor = 'desk'`, id).Scan(&detail)
		})
		for _, want := range []string{`barcode "I00005" -> "I00005-B"`, `item type "BOOK" -> "DVD"`, `home branch "CEN" -> "WES"`,
			`price "18.99" -> "9.99"`, `status "available" -> "missing"`} {
			if !strings.Contains(detail, want) {
				t.Errorf("audit detail %q lacks %q", detail, want)
			}
		}
	})

	t.Run("ErrDuplicateBarcode", func(t *testing.T) {
		err := update(itemID("I00006"), input("I00007"), "")
		if stacks.ErrorCode(err) != stacks.ECONFLICT || stacks.ErrorMessage(err) == "" || stacks.ErrorField(err) != "barcode" {
			t.Fatalf("taking another item's barcode: %v", err)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		if err := update(999999, input("Q1"), ""); stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("unknown item: %v", err)
		}
		err := d.Read(ctx, func(tx *db.Tx) error { _, err := catalog.FindItem(tx, 999999); return err })
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("FindItem of an unknown item: %v", err)
		}
	})
}
