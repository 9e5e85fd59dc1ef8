package stacks

import "strings"

// NormalizeCode checks a short code staff type for a branch, patron category or
// item type ("CEN", "ADULT", "BOOK"): 1 to 16 letters, digits, "-" or "_",
// returned in capitals. field names the form field for the error.
func NormalizeCode(field, code string) (string, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	if code == "" || len(code) > 16 || strings.ContainsFunc(code, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) {
		return "", FieldErrorf(field, EINVALID, "Enter a code of 1 to 16 letters or digits (for example CEN), without spaces.")
	}
	return code, nil
}

// NormalizeName checks the name staff see for a branch, category or type.
func NormalizeName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", FieldErrorf(field, EINVALID, "Enter a name of 1 to 200 characters.")
	}
	return name, nil
}
