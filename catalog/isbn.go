package catalog

import "strings"

// NormalizeISBN keeps the digits (and a final X) of the first ISBN in s, as a
// 020 $a holds it or a cataloguer types or scans it: a leading "ISBN", hyphens
// and spaces between the digits are dropped, and what follows the number (a
// qualifier such as "(pbk.)", or a price add-on after a space) is ignored.
// "0-441-47812-3 (pbk.)", "0 441 47812 3" and "ISBN 9780441478125 51599" become
// "0441478123" and "9780441478125". It returns "" when no 10 or 13 characters
// form an ISBN. The check digit is not verified: books are printed with wrong
// ones.
func NormalizeISBN(s string) string {
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if len(s) >= 4 && strings.EqualFold(s[:4], "ISBN") {
		s = strings.TrimLeft(s[4:], " :-")
	}
	// Spaces may group the digits, or end the number before an add-on: read
	// the groups while they are digits, and keep the longest run of whole
	// groups that is an ISBN.
	var digits []byte
	var best string
	for _, group := range strings.Fields(s) {
		if group[0] < '0' || group[0] > '9' {
			break
		}
		for i := 0; i < len(group); i++ {
			switch c := group[i]; {
			case c >= '0' && c <= '9':
				digits = append(digits, c)
			case (c == 'X' || c == 'x') && i == len(group)-1:
				digits = append(digits, 'X')
			}
		}
		if isbnShape(string(digits)) {
			best = string(digits)
		}
	}
	return best
}

// isbnShape reports whether s has 10 or 13 characters, digits but for an X
// that ends an ISBN-10.
func isbnShape(s string) bool {
	if len(s) != 10 && len(s) != 13 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && !(c == 'X' && i == 9 && len(s) == 10) {
			return false
		}
	}
	return true
}

// ISBNForms are a normalised ISBN's forms: itself, and its other form where it
// has one (the 978 ISBN-13 of an ISBN-10, the ISBN-10 of a 978 ISBN-13).
func ISBNForms(isbn string) []string {
	switch {
	case len(isbn) == 10:
		return []string{isbn, isbn10To13(isbn)}
	case len(isbn) == 13 && strings.HasPrefix(isbn, "978"):
		if other := isbn13To10(isbn); other != isbn {
			return []string{isbn, other}
		}
	}
	return []string{isbn}
}

func isbn10To13(s string) string {
	body := "978" + s[:9]
	return body + string(ISBNCheckDigit(body))
}

func isbn13To10(s string) string {
	body := s[3:12]
	if c := ISBNCheckDigit(body); c != 0 {
		return body + string(c)
	}
	return s
}

// ISBNCheckDigit is the check digit that completes body, the first 9 digits
// of an ISBN-10 (a digit or X) or the first 12 of an ISBN-13; 0 if body is
// neither.
func ISBNCheckDigit(body string) byte {
	for i := 0; i < len(body); i++ {
		if body[i] < '0' || body[i] > '9' {
			return 0
		}
	}
	sum := 0
	switch len(body) {
	case 9:
		for i := 0; i < 9; i++ {
			sum += (10 - i) * int(body[i]-'0')
		}
		if c := (11 - sum%11) % 11; c == 10 {
			return 'X'
		} else {
			return byte('0' + c)
		}
	case 12:
		for i := 0; i < 12; i++ {
			w := 1
			if i%2 == 1 {
				w = 3
			}
			sum += w * int(body[i]-'0')
		}
		return byte('0' + (10-sum%10)%10)
	}
	return 0
}

// ISBNCheckOK reports whether a normalised ISBN-10 or ISBN-13 ends in the
// check digit its other digits call for.
func ISBNCheckOK(isbn string) bool {
	n := len(isbn)
	if n != 10 && n != 13 {
		return false
	}
	c := ISBNCheckDigit(isbn[:n-1])
	return c != 0 && c == isbn[n-1]
}
