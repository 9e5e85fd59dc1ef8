package catalog_test

import (
	"slices"
	"testing"

	"github.com/stacks-ils/stacks/catalog"
)

func TestISBN(t *testing.T) {
	for in, want := range map[string]string{
		"0-441-47812-3 (pbk.)":          "0441478123",
		"0441478123 pbk.":               "0441478123",
		"0 441 47812 3":                 "0441478123",
		"978 0 441 47812 5":             "9780441478125",
		"ISBN 9780441478125 51599":      "9780441478125",
		"080442957x":                    "080442957X",
		"12345":                         "",
		"97804414781":                   "",
		"978 0201896 831":               "9780201896831",
		"9780201896831 (alk. paper) 52": "9780201896831",
	} {
		if got := catalog.NormalizeISBN(in); got != want {
			t.Errorf("NormalizeISBN(%q) = %q, want %q", in, got, want)
		}
	}
	for isbn, want := range map[string][]string{
		"0201896834":    {"0201896834", "9780201896831"},
		"9780201896831": {"9780201896831", "0201896834"},
		"080442957X":    {"080442957X", "9780804429573"},
		"9791034304543": {"9791034304543"},
	} {
		if got := catalog.ISBNForms(isbn); !slices.Equal(got, want) {
			t.Errorf("ISBNForms(%q) = %q, want %q", isbn, got, want)
		}
	}
	for isbn, ok := range map[string]bool{"0201896834": true, "0201896835": false, "080442957X": true, "9780201896831": true, "9780201896832": false, "97802018968X1": false} {
		if catalog.ISBNCheckOK(isbn) != ok {
			t.Errorf("ISBNCheckOK(%q) = %v", isbn, !ok)
		}
	}
}
