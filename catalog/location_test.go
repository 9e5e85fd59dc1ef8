package catalog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// TestItemLocation: the shelving location is trimmed, kept by AddItem and
// UpdateItem, read back by FindItemDetails, audited, and refused when it is too
// long or not one line.
func TestItemLocation(t *testing.T) {
	d := mustDemoDB(t)
	ctx := context.Background()
	var recordID int64
	if err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT id FROM records ORDER BY id LIMIT 1`).Scan(&recordID)
	}); err != nil {
		t.Fatal(err)
	}
	in := catalog.ItemInput{Barcode: "LOC0001", ItemTypeCode: "BOOK", HomeBranchCode: "CEN", CallNumber: "FIC LOC", Location: "  Adult fiction "}
	var id int64
	if err := writeTx(d, func(tx *db.Tx) (err error) { id, err = catalog.AddItem(tx, editor, recordID, in); return err }); err != nil {
		t.Fatal(err)
	}
	details := func() *catalog.ItemDetails {
		t.Helper()
		var it *catalog.ItemDetails
		if err := d.Read(ctx, func(tx *db.Tx) (err error) { it, err = catalog.FindItemDetails(tx, id); return err }); err != nil {
			t.Fatal(err)
		}
		return it
	}
	if it := details(); it.Location != "Adult fiction" || it.Input.Location != "Adult fiction" {
		t.Errorf("added with location %q (form %q), want Adult fiction", it.Location, it.Input.Location)
	}
	in.Location = "Reference"
	if err := writeTx(d, func(tx *db.Tx) error { _, err := catalog.UpdateItem(tx, editor, id, in, ""); return err }); err != nil {
		t.Fatal(err)
	}
	if it := details(); it.Location != "Reference" {
		t.Errorf("updated location %q, want Reference", it.Location)
	}
	var detail string
	if err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT detail FROM audit_log WHERE action = 'item.update' AND object_id = ? ORDER BY id DESC LIMIT 1`, id).Scan(&detail)
	}); err != nil || !strings.Contains(detail, "Reference") {
		t.Errorf("audit of the change: %q %v", detail, err)
	}
	for name, loc := range map[string]string{"TooLong": strings.Repeat("x", 41), "Newline": "Adult\nfiction", "Control": "Adult\x00"} {
		t.Run("Err"+name, func(t *testing.T) {
			bad := in
			bad.Location = loc
			err := writeTx(d, func(tx *db.Tx) error { _, err := catalog.UpdateItem(tx, editor, id, bad, ""); return err })
			if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != "location" {
				t.Errorf("location %q: %v", loc, err)
			}
		})
	}
	t.Run("OKEmpty", func(t *testing.T) {
		ok := in
		ok.Location = "   "
		if err := writeTx(d, func(tx *db.Tx) error { _, err := catalog.UpdateItem(tx, editor, id, ok, ""); return err }); err != nil {
			t.Fatal(err)
		}
		if it := details(); it.Location != "" {
			t.Errorf("location %q, want none", it.Location)
		}
	})
}

// TestHoldingsOfLocation: the shelving location is Koha's 952 $c and MARC 852 $c.
func TestHoldingsOfLocation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		field marc.Field
	}{
		{"Koha952", marc.Field{Tag: "952", Subfields: []marc.Subfield{{Code: 'a', Value: "CEN"}, {Code: 'c', Value: "REF"}, {Code: 'p', Value: "B1"}}}},
		{"MARC852", marc.Field{Tag: "852", Subfields: []marc.Subfield{{Code: 'b', Value: "CEN"}, {Code: 'c', Value: "REF"}, {Code: 'h', Value: "QA 1"}, {Code: 'p', Value: "B1"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := catalog.HoldingsOf(&marc.Record{Fields: []marc.Field{tc.field}})
			if len(hs) != 1 || hs[0].Location != "REF" || hs[0].Barcode != "B1" {
				t.Errorf("holdings %+v, want one at location REF", hs)
			}
		})
	}
}
