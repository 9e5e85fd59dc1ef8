package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

// TestNewItemDefaults: a new copy takes the item type, call number, shelving
// location and price of the record's newest copy; a record without copies gives
// none.
func TestNewItemDefaults(t *testing.T) { forEngines(t, testNewItemDefaults) }

func testNewItemDefaults(t *testing.T, e db.Engine) {
	d := demoDBOn(t, e, smallDemo, db.Options{})
	now := dbtest.Monday
	d.Now = func() time.Time { return now }
	var recordID int64
	mustWriteTx(t, d, func(tx *db.Tx) (err error) {
		recordID, err = catalog.CreateRecord(tx, editor, catalog.RecordInput{Title: "Quixotic Zeppelins"})
		return err
	})
	defaults := func() (catalog.ItemInput, bool) {
		t.Helper()
		f, err := catalog.NewService(d, catalog.Timeouts{}).NewItemForm(context.Background(), recordID)
		if err != nil {
			t.Fatal(err)
		}
		return f.Defaults, f.Defaults != (catalog.ItemInput{})
	}
	add := func(in catalog.ItemInput) {
		t.Helper()
		mustWriteTx(t, d, func(tx *db.Tx) error {
			_, err := catalog.AddItem(tx, editor, recordID, in)
			return err
		})
	}

	t.Run("NoCopies", func(t *testing.T) {
		if in, found := defaults(); found || in != (catalog.ItemInput{}) {
			t.Fatalf("defaults of a record without copies: %+v, %v", in, found)
		}
	})
	t.Run("NewestCopy", func(t *testing.T) {
		add(catalog.ItemInput{Barcode: "QZ0001", ItemTypeCode: "BOOK", HomeBranchCode: "CEN", CallNumber: "629.1 OLD", Location: "Stacks", Price: "10"})
		now = now.Add(time.Minute)
		add(catalog.ItemInput{Barcode: "QZ0002", ItemTypeCode: "DVD", HomeBranchCode: "EAS", CallNumber: "629.133 VAN", Location: "Adult non-fiction", Price: "24.5"})
		want := catalog.ItemInput{ItemTypeCode: "DVD", CallNumber: "629.133 VAN", Location: "Adult non-fiction", Price: "24.50"}
		if in, found := defaults(); !found || in != want {
			t.Fatalf("defaults: %+v, %v; want %+v", in, found, want)
		}
	})
	t.Run("NoPrice", func(t *testing.T) {
		now = now.Add(time.Minute)
		add(catalog.ItemInput{Barcode: "QZ0003", ItemTypeCode: "BOOK", HomeBranchCode: "CEN", CallNumber: "629.133 VAN"})
		want := catalog.ItemInput{ItemTypeCode: "BOOK", CallNumber: "629.133 VAN"}
		if in, found := defaults(); !found || in != want {
			t.Fatalf("defaults: %+v, %v; want %+v", in, found, want)
		}
	})
}
