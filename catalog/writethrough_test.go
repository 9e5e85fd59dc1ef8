package catalog

import (
	"slices"
	"testing"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// FuzzWriteThrough: whatever the quick form sends (once it validates), writing
// it through to a record leaves the record valid, and every field of the form
// that was not changed reads from the MARC as before.
func FuzzWriteThrough(f *testing.F) {
	f.Add("Corrected title: a novel", "Le Guin, Ursula K.", "0441478123", "Ace Books", "1970", "Androgyny -- Fiction\nGender")
	f.Add("", "", "", "", "", "")
	f.Add("The left hand of darkness: a novel", "", "9780441478125", "", "", "Space colonies -- Fiction")
	f.Add("x", "Someone", "", "Somewhere", "2001", "")
	const text = "=LDR  00000nam\\a2200000\\a\\4500\n=001  ocm123\n=008  690101s1969\\\\\\\\nyu\\\\\\\\\\\\\\\\\\\\\\000\\1\\eng\\d\n" +
		"=020  \\\\$a0441478123 (pbk.) :$c{dollar}7.50\n=100  1\\$aLe Guin, Ursula K.,$d1929-2018.\n" +
		"=245  14$aThe left hand of darkness :$ba novel /$cUrsula K. Le Guin.\n=246  3\\$aLeft hand\n" +
		"=264  \\1$aNew York :$bAce Books,$cc1969.\n=650  \\0$aAndrogyny$vFiction.\n=650  \\0$aSpace colonies$vFiction.\n=700  1\\$aSomeone, Else.\n"
	f.Fuzz(func(t *testing.T, title, author, isbn, publisher, year, subjects string) {
		in := RecordInput{Title: title, Author: author, ISBN: isbn, Publisher: publisher, Year: year, Subjects: subjects}
		if in.Validate() != nil {
			return
		}
		for _, start := range []string{text, "=LDR  00000nam\\a2200000\\a\\4500\n=245  00$aBare\n"} {
			rec, errs := marc.ParseText(start)
			if errs != nil {
				t.Fatal(errs)
			}
			old := BibOf(rec)
			writeThrough(rec, bibInput(old), in)
			if err := rec.Validate(); err != nil {
				t.Fatalf("the record does not validate: %v", err)
			}
			now, was := BibOf(rec), bibInput(old)
			nowIn := bibInput(now)
			for _, f := range []struct {
				name               string
				typed, before, got string
			}{
				{"title", in.Title, was.Title, nowIn.Title}, {"author", in.Author, was.Author, nowIn.Author},
				{"isbn", in.ISBN, was.ISBN, nowIn.ISBN}, {"publisher", in.Publisher, was.Publisher, nowIn.Publisher},
				{"year", in.Year, was.Year, nowIn.Year},
			} {
				if f.typed == f.before && f.got != f.before {
					t.Errorf("%s was not edited but reads %q, was %q", f.name, f.got, f.before)
				}
			}
			if in.Subjects == was.Subjects && !slices.Equal(now.Subjects, old.Subjects) {
				t.Errorf("subjects were not edited but read %q, were %q", now.Subjects, old.Subjects)
			}
			if in.ISBN != was.ISBN && now.ISBN != in.ISBN {
				t.Errorf("ISBN %q typed, reads %q", in.ISBN, now.ISBN)
			}
		}
	})
}

func TestWriteThroughTitle(t *testing.T) {
	const start = "=LDR  00000nam\\a2200000\\a\\4500\n=245  14$aThe left hand of darkness :$ba novell /$cUrsula K. Le Guin.\n"
	for _, tc := range []struct{ title, want string }{
		{"The left hand of darkness: a novell", "=245  14$aThe left hand of darkness :$ba novell /$cUrsula K. Le Guin."},
		{"The Left Hand of Darkness: a novell", "=245  14$aThe Left Hand of Darkness :$ba novell /$cUrsula K. Le Guin."},
		{"The left hand of darkness: a novel", "=245  14$aThe left hand of darkness :$ba novel /$cUrsula K. Le Guin."},
		{"The left hand of light", "=245  14$aThe left hand of light :$ba novell /$cUrsula K. Le Guin."},
	} {
		rec, errs := marc.ParseText(start)
		if errs != nil {
			t.Fatal(errs)
		}
		old := bibInput(BibOf(rec))
		in := old
		in.Title = tc.title
		writeThrough(rec, old, in)
		if got := marc.FormatField(rec.Fields[0]); got != tc.want {
			t.Errorf("title %q: %s, want %s", tc.title, got, tc.want)
		}
		if tc.title != "The left hand of light" && BibOf(rec).Title != tc.title {
			t.Errorf("title %q reads %q", tc.title, BibOf(rec).Title)
		}
	}
}
