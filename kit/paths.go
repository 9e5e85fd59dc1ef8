package kit

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/stacks-ils/stacks/basepath"
)

// Either site may be served under a sub-path (stacks serve --base-path or
// --opac-base-path, or a CGI or FastCGI mount such as /cgi-bin/stacks): the
// router sees the routed path only, and every URL a site emits goes through
// At, basepath.URL, Redirect or Refresh, which put the request's base path back
// in front (package basepath). Handlers and view models keep routed paths
// ("/patrons/7"), never the base.

// At returns the site path p under the request's base path, for an href, src,
// action or formaction. An external URL, a fragment or "mailto:" is returned as
// it is.
func At(ctx context.Context, p string) templ.SafeURL {
	return templ.SafeURL(basepath.URL(ctx, p))
}

// Redirect sends the browser to the site path p under the request's base path.
func Redirect(w http.ResponseWriter, r *http.Request, p string, code int) {
	http.Redirect(w, r, basepath.URL(r.Context(), p), code)
}

// Refresh asks the browser to load the site path p again after seconds (the
// Refresh header, honoured without JavaScript), under the base path.
func Refresh(w http.ResponseWriter, r *http.Request, seconds int, p string) {
	w.Header().Set("Refresh", fmt.Sprintf("%d; url=%s", seconds, basepath.URL(r.Context(), p)))
}

// CookiePath is the Path of the site's cookies for the request: the base path
// and a slash, "/" at the root.
func CookiePath(r *http.Request) string { return basepath.CookiePath(basepath.From(r.Context())) }

// IsLocalPath reports whether s, sent back in a Location header (a sign-in
// form's "next"), can only take a browser to a page of this site: a plain
// absolute path, with an optional query, as the browser will parse it, not as
// Go does.
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
// front of it when it is sent (Redirect). So that it stays under the base, a
// "." or ".." segment, also percent-encoded ("%2e%2e"), is refused: a browser
// would resolve "/library/../admin" to "/admin", another site on the host.
func IsLocalPath(s string) bool {
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

// FormErrors maps form field names to messages, for showing each beside its field.
type FormErrors map[string]string

// Has reports whether the field has an error.
func (e FormErrors) Has(field string) bool { _, ok := e[field]; return ok }

// Get returns the field's message.
func (e FormErrors) Get(field string) string { return e[field] }

// Invalid returns "true" for the aria-invalid attribute of a field in error,
// else "false".
func (e FormErrors) Invalid(field string) string {
	if e.Has(field) {
		return "true"
	}
	return "false"
}
