package web_test

import (
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/web"
)

// FuzzParseMoney: an amount the pay, waive and preferences forms accept is written
// with digits and at most one decimal point or comma followed by one or two digits;
// it is never negative; and it reads back the same after being shown.
func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"5", "5.5", "5.50", "5,50", " 12.50 ", ".5", "0", "", "-1", "+5", "5.+1", "5.-1", "1e3",
		"999999999999999", "9999999999999999", "5.555", "5.", "1_000", "\xff", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cents, ok := web.ParseMoney(s)
		if !ok {
			return
		}
		if cents < 0 {
			t.Fatalf("ParseMoney(%q) = %d, negative", s, cents)
		}
		body := strings.TrimSpace(strings.ReplaceAll(s, ",", "."))
		whole, frac, hasFrac := strings.Cut(body, ".")
		digits := func(s string) bool {
			return strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
		}
		if !digits(whole) || !digits(frac) || (hasFrac && (len(frac) < 1 || len(frac) > 2)) || (whole == "" && frac == "") {
			t.Fatalf("ParseMoney accepted %q as %d: not an amount", s, cents)
		}
		if back, ok := web.ParseMoney(web.FormatMoney(cents)); !ok || back != cents {
			t.Fatalf("ParseMoney(%q) = %d, shown as %q, read back as %d, %v", s, cents, web.FormatMoney(cents), back, ok)
		}
	})
}
