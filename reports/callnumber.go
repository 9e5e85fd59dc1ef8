package reports

import (
	"strings"
	"unicode"
)

// cnDigits is how wide a number in a call number is padded: class numbers and
// cutters are far shorter.
const cnDigits = 10

// CallNumberKey is a call number's shelf-order key, as Koha's cn_sort: upper
// case, every run of spaces and punctuation (but a decimal point) one space, and
// every whole number zero-padded, so that "QA 99" sorts before "QA 100" and "fic
// b" sits between "FIC A" and "FIC C". The digits after a decimal point between
// digits are a fraction and are not padded ("823.2" after "823.15"). A key that
// starts another key's call number is a prefix of its key, as "FIC C" of "FIC
// COLLINS".
func CallNumberKey(s string) string {
	r := []rune(strings.ToUpper(s))
	var b strings.Builder
	space := false
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case unicode.IsDigit(c):
			j := i
			for j < len(r) && unicode.IsDigit(r[j]) {
				j++
			}
			digits := string(r[i:j])
			fraction := i >= 2 && r[i-1] == '.' && unicode.IsDigit(r[i-2])
			if !fraction {
				digits = strings.TrimLeft(digits, "0")
				if len(digits) < cnDigits {
					digits = strings.Repeat("0", cnDigits-len(digits)) + digits
				}
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteString(digits)
			i = j
			continue
		case c == '.' && i > 0 && unicode.IsDigit(r[i-1]) && i+1 < len(r) && unicode.IsDigit(r[i+1]):
			b.WriteByte('.')
		case unicode.IsLetter(c):
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(c)
		default: // spaces and punctuation
			if b.Len() > 0 {
				space = true
			}
		}
		i++
	}
	return b.String()
}
