package demo

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/stacks-ils/stacks/catalog"
)

// itemBarcode returns the n-th generated item barcode: 14 digits in the usual
// library layout, "3" (an item), "9999" (the demo institution), an 8-digit sequence
// number and a Luhn (mod 10) check digit. The fixtures' "I00001" style can never be
// one of these.
func itemBarcode(n int) string {
	body := fmt.Sprintf("39999%08d", n)
	return body + string(rune('0'+luhnCheck(body)))
}

// luhnCheck returns the Luhn check digit for a string of digits.
func luhnCheck(digits string) int {
	sum := 0
	double := true // the digit next to the check digit is doubled
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return (10 - sum%10) % 10
}

// isbn13 completes 12 digits into an ISBN-13 with its check digit.
func isbn13(twelve string) string {
	return twelve + string(catalog.ISBNCheckDigit(twelve))
}

// cutter returns the first three letters of s, upper-cased, for call numbers
// ("Le Guin, Ursula K." → "LEG").
func cutter(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 3 {
			break
		}
		if r < unicode.MaxASCII && unicode.IsLetter(r) {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// withoutArticle drops a leading English article, as filing rules do.
func withoutArticle(title string) string {
	for _, a := range []string{"The ", "A ", "An "} {
		if strings.HasPrefix(title, a) {
			return title[len(a):]
		}
	}
	return title
}

// capitalize upper-cases the first letter of s ("the Night Sky" at the start of a title).
func capitalize(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}
