package web

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// isLocalPath reports whether s, sent back in a Location header, can only take a
// browser to a page of this site: a plain absolute path, with an optional query,
// as the browser will parse it, not as Go does.
//
// Browsers are lenient where Go is not. The URL standard drops tabs and line
// breaks anywhere in a URL and reads a backslash as a slash, so "/\t/evil.example",
// "/\n/evil.example" and "/\\evil.example" all become "//evil.example", a link to
// another site, although Go's url.Parse sees a path in each. So anything that
// a browser might rewrite is refused outright rather than cleaned: control
// characters (C0, DEL and C1), any white space, a backslash, and text that is
// not UTF-8. What is left must start with exactly one slash and parse as a path
// with no scheme, host or user.
//
// The path is a routed path: the site's base path (package basepath) is put in
// front of it when it is sent (redirect). So that it stays under the base, a
// "." or ".." segment, also percent-encoded ("%2e%2e"), is refused: a browser
// would resolve "/library/../admin" to "/admin", another site on the host.
func isLocalPath(s string) bool {
	if len(s) == 0 || s[0] != '/' || strings.HasPrefix(s, "//") || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) {
			return false
		}
	}
	u, err := url.Parse(s)
	if err != nil || hasDotSegment(u.Path) {
		return false
	}
	return u.Scheme == "" && u.Host == "" && u.User == nil && u.Opaque == "" &&
		strings.HasPrefix(u.EscapedPath(), "/") && !strings.HasPrefix(u.EscapedPath(), "//")
}

// hasDotSegment reports whether the (decoded) path has a "." or ".." segment.
func hasDotSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
