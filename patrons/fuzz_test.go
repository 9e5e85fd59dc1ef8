package patrons_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/patrons"
)

// FuzzInputValidate feeds the patron form's parser any input. Validate never
// panics; what it accepts is valid UTF-8 without NULs, within the field limits,
// with one-line fields on one line, and unchanged by a second Validate; what it
// refuses names the field to fix. (testdata/fuzz holds what it found: a NUL in an
// e-mail address was once accepted.)
func FuzzInputValidate(f *testing.F) {
	f.Add("P0100", "Reader", "Alex", "alex@example.org", "555 0100", "1 Main St\r\nTown", "adult", "cen", "notes")
	f.Add("", "", "", "", "", "", "", "", "")
	f.Add(" p-01 ", "Le Guin", "Ursula K.", "", "", "", "ADULT", "CEN", "")
	f.Add("P0100", "O'Brien\x00", "a\nb", "x@y", "+44 (0)20", "a\x01b", "ADULT", "CEN", "\xff\xfe")
	f.Add("P 0100", strings.Repeat("é", 101), "", "no-at-sign", "", "", "ADULT", "CEN", "")
	f.Fuzz(func(t *testing.T, card, surname, first, email, phone, address, category, branch, notes string) {
		in := patrons.Input{Card: card, Surname: surname, FirstName: first, Email: email, Phone: phone,
			Address: address, CategoryCode: category, HomeBranchCode: branch, Notes: notes}
		err := in.Validate()
		if err != nil {
			if stacks.ErrorField(err) == "" || stacks.ErrorCode(err) != stacks.EINVALID {
				t.Fatalf("refusal %v names no field, or is not EINVALID", err)
			}
			return
		}
		for name, v := range map[string]string{"card": in.Card, "surname": in.Surname, "first_name": in.FirstName,
			"email": in.Email, "phone": in.Phone, "address": in.Address, "category": in.CategoryCode,
			"home_branch": in.HomeBranchCode, "notes": in.Notes} {
			if !utf8.ValidString(v) {
				t.Fatalf("accepted %s %q is not valid UTF-8", name, v)
			}
			// The category and branch codes are looked up, not stored.
			if strings.ContainsRune(v, 0) && name != "category" && name != "home_branch" {
				t.Fatalf("accepted %s %q holds a NUL", name, v)
			}
			if v != strings.TrimSpace(v) {
				t.Fatalf("accepted %s %q is not trimmed", name, v)
			}
		}
		for name, v := range map[string]string{"card": in.Card, "surname": in.Surname, "first_name": in.FirstName, "email": in.Email, "phone": in.Phone} {
			if strings.ContainsAny(v, "\r\n") {
				t.Fatalf("accepted one-line %s %q holds a line break", name, v)
			}
		}
		if in.Card == "" || in.Surname == "" || len(in.Card) > 32 || utf8.RuneCountInString(in.Surname) > 100 ||
			utf8.RuneCountInString(in.Notes) > 2000 || utf8.RuneCountInString(in.Address) > 500 {
			t.Fatalf("accepted input beyond the limits: %+v", in)
		}
		again := in
		if err := again.Validate(); err != nil || again != in {
			t.Fatalf("Validate is not idempotent: %+v -> %+v, %v", in, again, err)
		}
	})
}
