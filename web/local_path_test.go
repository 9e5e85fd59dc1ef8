package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestIsLocalPath: only a plain path on this site passes; everything a browser
// might read as another site (after dropping tabs and line breaks, reading "\" as
// "/") is refused, as is anything with a control character or white space.
func TestIsLocalPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"/", true},
		{"/patrons?q=x", true},
		{"/patrons?q=Ann+Smith&page=2", true},
		{"/records/12#holds", true},
		{"/search?q=%2F%2Fevil.example", true},
		{"/%2F%2Fevil.example", true}, // an encoded slash stays in the path
		{"/caf%C3%A9", true},
		{"/café", true},

		{"", false},
		{"patrons", false},
		{"//evil.example", false},
		{"///evil.example", false},
		{"/\\evil.example", false},
		{"\\\\evil.example", false},
		{"/patrons\\..\\..\\evil", false},
		{"https://evil.example/", false},
		{"http:/evil.example", false},
		{"javascript:alert(1)", false},
		{" //evil.example", false},
		{"\t//evil.example", false},
		{"/\t/evil.example", false},
		{"/\n/evil.example", false},
		{"/\r/evil.example", false},
		{"/\r\n/evil.example", false},
		{"/\x00/evil.example", false},
		{"/\x0b/evil.example", false},
		{"/\x0c/evil.example", false},
		{"/\x1f/evil.example", false},
		{"/\x7f/evil.example", false},
		{"/\u0085/evil.example", false},
		{"/\u00a0/evil.example", false},
		{"/\u2028/evil.example", false},
		{"/ /evil.example", false},
		{"/patrons?q=\t", false},
		{"/\xff", false},
		{"/\\", false},
		// Sent under a base path (/library + next), a dot segment would climb out.
		{"/..", false},
		{"/../admin", false},
		{"/%2e%2e/admin", false},
		{"/%2E./admin", false},
		{"/a/./b", false},
		{"/a/b/..", false},
		{"/search?q=..", true},
		{"/records/1..2", true},
	} {
		if got := isLocalPath(tc.in); got != tc.want {
			t.Errorf("isLocalPath(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if got := safeNext(tc.in); tc.want && got != tc.in || !tc.want && got != "/" {
			t.Errorf("safeNext(%q) = %q", tc.in, got)
		}
	}
}

// TestSafeReturn: a form's "return" field is followed only when it is a path on
// this site; the fallback otherwise.
func TestSafeReturn(t *testing.T) {
	for _, tc := range []struct{ back, want string }{
		{"/patrons/3", "/patrons/3"},
		{"", "/holds"},
		{"/\t/evil.example", "/holds"},
		{"/\\evil.example", "/holds"},
		{"//evil.example", "/holds"},
		{"/patrons/3\x00", "/holds"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/holds/1/move", strings.NewReader(url.Values{"return": {tc.back}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if got := safeReturn(r, "/holds"); got != tc.want {
			t.Errorf("return %q: %q, want %q", tc.back, got, tc.want)
		}
	}
}
