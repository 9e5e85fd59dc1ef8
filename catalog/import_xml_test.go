package catalog_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
)

// TestImportMalformedXML: a MARCXML file that cannot be read to its end is the
// importer's mistake to correct, not a fault of ours: Import stops with an
// EINVALID error about the file that says where and what, and CheckXML finds the
// same before anything is imported. A well-formed file passes CheckXML.
func TestImportMalformedXML(t *testing.T) {
	good, err := os.ReadFile(testdata("sandburg-1.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.CheckXML(strings.NewReader(string(good))); err != nil {
		t.Fatalf("CheckXML on a well-formed file: %v", err)
	}
	d := mustDemoDB(t)
	for name, doc := range map[string]string{
		"Truncated":     string(good[:len(good)/2]),
		"BareAmpersand": strings.Replace(string(good), "Arithmetic", "Fish & chips", 1),
	} {
		t.Run(name, func(t *testing.T) {
			err := catalog.CheckXML(strings.NewReader(doc))
			if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != "file" || !strings.Contains(stacks.ErrorMessage(err), "at line ") {
				t.Errorf("CheckXML: %v, want EINVALID about the file, with the line", err)
			}
			rr, err := marc.NewAutoReader(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			_, err = catalog.Import(context.Background(), d, rr, catalog.ImportOptions{Actor: stacks.Actor{Name: "test"}, Branch: "CEN", ItemType: "BOOK"})
			if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "not well-formed MARCXML") {
				t.Errorf("Import: %v, want EINVALID saying the file is not well formed", err)
			}
		})
	}
}
