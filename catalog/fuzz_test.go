package catalog_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
)

// FuzzNormalizeBarcode: a barcode that NormalizeBarcode accepts is valid UTF-8,
// trimmed, at most 64 bytes, without control characters, and normalizes to itself.
func FuzzNormalizeBarcode(f *testing.F) {
	for _, s := range []string{"I00001", " 39999000000019\r\n", "", "\x00", "\xff", strings.Repeat("9", 65), "a\tb", "ÉCOLE-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := catalog.NormalizeBarcode(s)
		if err != nil {
			if stacks.ErrorField(err) != "barcode" {
				t.Fatalf("refusal %v is not about the barcode field", err)
			}
			return
		}
		if b == "" || !utf8.ValidString(b) || len(b) > 64 || b != strings.TrimSpace(b) ||
			strings.ContainsFunc(b, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("accepted barcode %q", b)
		}
		if again, err := catalog.NormalizeBarcode(b); err != nil || again != b {
			t.Fatalf("NormalizeBarcode(%q) = %q, %v: not idempotent", b, again, err)
		}
	})
}

// FuzzRecordInputValidate: a record Validate accepts has a title, valid UTF-8 in
// every field, one-line fields on one line, an ISBN of 10 or 13 characters or none,
// a year of 1 to 9999 or none, and validates again unchanged.
func FuzzRecordInputValidate(f *testing.F) {
	f.Add("The Left Hand of Darkness", "Le Guin, Ursula K.", "978-0-441-47812-5", "Ace", "1969", "Science fiction\r\nGender")
	f.Add("", "", "", "", "", "")
	f.Add("T\x00", "a\nb", "0-8044-2957-x", "\xff", "-1", "\t")
	f.Add(strings.Repeat("x", 1001), "", "123456789012", "", "+1969", strings.Repeat("s\n", 101))
	f.Fuzz(func(t *testing.T, title, author, isbn, publisher, year, subjects string) {
		in := catalog.RecordInput{Title: title, Author: author, ISBN: isbn, Publisher: publisher, Year: year, Subjects: subjects}
		if err := in.Validate(); err != nil {
			if stacks.ErrorField(err) == "" {
				t.Fatalf("refusal %v names no field", err)
			}
			return
		}
		for _, v := range []string{in.Title, in.Author, in.ISBN, in.Publisher, in.Year, in.Subjects} {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				t.Fatalf("accepted %+v holds invalid text", in)
			}
		}
		for _, v := range []string{in.Title, in.Author, in.ISBN, in.Publisher, in.Year} {
			if strings.ContainsFunc(v, unicode.IsControl) {
				t.Fatalf("accepted one-line field %q holds a control character", v)
			}
		}
		if in.Title == "" || (in.ISBN != "" && len(in.ISBN) != 10 && len(in.ISBN) != 13) {
			t.Fatalf("accepted %+v", in)
		}
		again := in
		if err := again.Validate(); err != nil || again != in {
			t.Fatalf("Validate is not idempotent: %+v -> %+v, %v", in, again, err)
		}
	})
}

// FuzzItemInputValidate: an item Validate accepts has a barcode, codes, a one-line
// call number and a price it can read, and validates again unchanged.
func FuzzItemInputValidate(f *testing.F) {
	f.Add("I00011", "book", "cen", "FIC LEG", "18.99")
	f.Add("", "", "", "", "")
	f.Add(" 39999000000019 ", "DVD", "EAS", "", "18,9")
	f.Add("a\x00", "B\nOOK", "C", "x\ty", "1e9")
	f.Add("I1", "BOOK", "CEN", "", "9999999999.99")
	f.Fuzz(func(t *testing.T, barcode, itemType, branch, call, price string) {
		in := catalog.ItemInput{Barcode: barcode, ItemTypeCode: itemType, HomeBranchCode: branch, CallNumber: call, Price: price}
		if err := in.Validate(); err != nil {
			if stacks.ErrorField(err) == "" {
				t.Fatalf("refusal %v names no field", err)
			}
			return
		}
		if in.Barcode == "" || in.ItemTypeCode == "" || in.HomeBranchCode == "" ||
			!utf8.ValidString(in.CallNumber) || strings.ContainsFunc(in.CallNumber, unicode.IsControl) {
			t.Fatalf("accepted %+v", in)
		}
		if strings.ContainsFunc(in.Price, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != ',' }) {
			t.Fatalf("accepted price %q", in.Price)
		}
		again := in
		if err := again.Validate(); err != nil || again != in {
			t.Fatalf("Validate is not idempotent: %+v -> %+v, %v", in, again, err)
		}
	})
}

// FuzzMatchExpression: whatever staff type in the search box, MatchExpression
// either refuses it with a message or returns an expression that SQLite's FTS5
// accepts, on a table shaped like the catalogue's index: typed FTS syntax never
// reaches the engine as syntax.
func FuzzMatchExpression(f *testing.F) {
	for _, s := range []string{"left hand of darkness", "author:le guin", "title:dark*", `"NEAR(a b)" OR x`, "a:b:c",
		"-x ^y (z", "isbn:978-0-441", "émile", "\xff", "the", "*", "subject: AND", strings.Repeat("ab ", 200)} {
		f.Add(s)
	}
	conn, err := sql.Open("sqlite", filepath.Join(f.TempDir(), "fts.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { conn.Close() })
	conn.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE VIRTUAL TABLE fts USING fts5(title, author, subjects, isbn, tokenize = 'porter unicode61 remove_diacritics 2')`,
		`INSERT INTO fts VALUES ('The Left Hand of Darkness', 'Le Guin', 'Science fiction', '9780441478125')`,
	} {
		if _, err := conn.Exec(q); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		expr, err := catalog.MatchExpression(text)
		if err != nil {
			if stacks.ErrorCode(err) != stacks.EINVALID {
				t.Fatalf("MatchExpression(%q): %v, want EINVALID", text, err)
			}
			return
		}
		var n int
		if err := conn.QueryRow(`SELECT count(*) FROM fts WHERE fts MATCH ?`, expr).Scan(&n); err != nil {
			t.Fatalf("MatchExpression(%q) = %q, which FTS5 refuses: %v", text, expr, err)
		}
	})
}
