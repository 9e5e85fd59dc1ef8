package web_test

import (
	"net/url"
	"testing"
)

// TestPatronSearchWays: the Patrons page finds a patron the ways staff are asked
// for one: "Surname, First", a phone number written any way, an e-mail address,
// part of a card number.
func TestPatronSearchWays(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	alex := `<a href="` + e.patronPath(t, "P0001") + `">Reader, Alex</a>`
	casey := `<a href="` + e.patronPath(t, "P0003") + `">Waiting, Casey</a>`
	for _, tc := range []struct{ name, q, want string }{
		{"SurnameCommaFirst", "Reader, Alex", alex},
		{"PhoneWithSpaces", "555 01 01", alex},
		{"PhoneWithParentheses", "(555) 0101", alex},
		{"Email", "Alex.Reader@example.org", alex},
		{"CardPart", "0003", casey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.get(t, c, "/patrons?q="+url.QueryEscape(tc.q))
			mustContain(t, "the results for "+tc.q, r.Body, tc.want)
		})
	}
}
