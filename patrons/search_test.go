package patrons_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/patrons"
)

// addPaulGarcia registers the patron the search cases look for, with a card, a
// phone number and an e-mail address written as people write them.
func addPaulGarcia(tb testing.TB, d *db.DB) {
	tb.Helper()
	err := write(d, func(tx *db.Tx) error {
		in := validInput()
		in.Card, in.Surname, in.FirstName = "LIB-7246813", "Garcia", "Paul"
		in.Phone, in.Email = "(503) 555-7788", "Paul.Garcia@Example.net"
		_, err := patrons.Create(tx, desk, in)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// TestSearchWays: staff find a patron by "Surname, First", by the phone number as
// it is written anywhere, by the e-mail address or its beginning, and by part of
// the card number.
func TestSearchWays(t *testing.T) {
	d := mustOpenDB(t)
	addPaulGarcia(t, d)
	const paul = "LIB-7246813 Paul Garcia"
	search := func(q string) []string {
		t.Helper()
		var out []string
		read(t, d, func(tx *db.Tx) error {
			ps, err := patrons.Search(tx, q, 50)
			for _, p := range ps {
				out = append(out, p.Card+" "+p.Name())
			}
			return err
		})
		return out
	}
	for _, tc := range []struct {
		name, q string
		found   bool
	}{
		{"SurnameCommaFirst", "Garcia, Paul", true},
		{"SurnameCommaFirstNoSpace", "garcia,paul", true},
		{"SurnameCommaInitial", "Garcia, P", true},
		{"FirstSurname", "Paul Garcia", true},
		{"OtherFirstName", "Garcia, Alex", false},
		{"PhoneAsStored", "(503) 555-7788", true},
		{"PhoneDigits", "5035557788", true},
		{"PhoneDashes", "503-555-7788", true},
		{"PhoneDots", "503.555.7788", true},
		{"PhoneLocalPart", "555 7788", true},
		{"PhoneLastDigits", "7788", true},
		{"TooFewDigitsForAPhone", "788", false},
		{"PhoneOtherNumber", "503-555-7789", false},
		{"Email", "paul.garcia@example.net", true},
		{"EmailBeginning", "PAUL.GARCIA@", true},
		{"EmailMiddle", "garcia@example", false},
		{"CardPart", "7246", true},
		{"CardPartWithLetters", "b-72", true},
		{"CardExact", "lib-7246813", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := search(tc.q)
			has := false
			for _, p := range got {
				has = has || p == paul
			}
			if has != tc.found {
				t.Fatalf("Search(%q) = %v; want Paul Garcia found: %v", tc.q, got, tc.found)
			}
			if tc.found && tc.name == "CardExact" && got[0] != paul {
				t.Errorf("Search(%q) = %v; want the exact card first", tc.q, got)
			}
		})
	}
}

// BenchmarkSearch600 is each way of Search on a library of 600 patrons: every one
// reads the whole patrons table.
func BenchmarkSearch600(b *testing.B) {
	d := demotest.Demo(b, demo.Options{Titles: 50, Patrons: 600}, testNow, db.Options{})
	addPaulGarcia(b, d)
	for _, q := range []string{"garcia paul", "Garcia, Paul", "503-555-7788", "paul.garcia@", "7246", "LIB-7246813"} {
		b.Run(strings.NewReplacer(" ", "", ",", "").Replace(q), func(b *testing.B) {
			for b.Loop() {
				read(b, d, func(tx *db.Tx) error {
					ps, err := patrons.Search(tx, q, 51)
					if err == nil && len(ps) == 0 {
						err = fmt.Errorf("Search(%q) found nobody", q)
					}
					return err
				})
			}
		})
	}
}
