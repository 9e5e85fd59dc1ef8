package opac_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
)

// TestMergedRecordRedirects: the permanent link of a record merged into
// another leads to the record kept; a deleted record's is still not found.
func TestMergedRecordRedirects(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	ctx := context.Background()
	svc := catalog.NewService(e.DB, catalog.Timeouts{})
	keep := e.recordOf(t, "I00010")
	dup, err := svc.CreateRecord(ctx, stacks.System, catalog.RecordInput{Title: "The Left Hand of Darkness (duplicate)"})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := svc.CreateRecord(ctx, stacks.System, catalog.RecordInput{Title: "Removed"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.MergeRecords(ctx, stacks.System, keep, dup, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteRecord(ctx, stacks.System, gone, 0); err != nil {
		t.Fatal(err)
	}
	r := e.get(t, c, "/records/"+strconv.FormatInt(dup, 10))
	if want := "/records/" + strconv.FormatInt(keep, 10); r.Status != http.StatusMovedPermanently || r.Location != want {
		t.Errorf("merged record: %d to %q, want 301 to %s", r.Status, r.Location, want)
	}
	if r := e.get(t, c, "/records/"+strconv.FormatInt(gone, 10)); r.Status != http.StatusNotFound {
		t.Errorf("deleted record: %d, want 404", r.Status)
	}
}
