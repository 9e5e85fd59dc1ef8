// Package basepath serves a site under a sub-path, such as /library behind a
// proxy or /cgi-bin/stacks under Apache, and builds the site's URLs under it.
//
// The routers of the staff site (package web) and the patrons' site (package
// opac) see only the routed path ("/checkout"); the base ("/library") is kept in
// the request's context, and every URL the sites emit (links, form actions,
// redirects, assets, cookie paths) goes through URL, which puts the base back
// in front. With no base, URL returns its argument unchanged, so a site at the
// root pays nothing.
//
// A base path is "" (the root) or starts with one "/", has no trailing "/", and
// has no empty, "." or ".." segment, no query, fragment, control character, white
// space or backslash (Clean says which rule a bad one breaks).
package basepath

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode"

	"github.com/alexedwards/scs/v2"
)

type key struct{}

// With returns ctx carrying base, a base path Clean accepted.
func With(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, key{}, base)
}

// From returns the base path of the request whose context is ctx: "" at the root.
func From(ctx context.Context) string {
	b, _ := ctx.Value(key{}).(string)
	return b
}

// URL returns the site path p ("/checkout?x=1") under the request's base path
// ("/library/checkout?x=1"). Anything that is not a site path is returned as it
// is: an absolute URL, "//host", a fragment ("#main"), "mailto:", a relative
// path, or "". At the root it is p itself, without an allocation.
func URL(ctx context.Context, p string) string {
	return Join(From(ctx), p)
}

// Join returns the site path p under base, as URL does.
func Join(base, p string) string {
	if base == "" || len(p) == 0 || p[0] != '/' || (len(p) > 1 && (p[1] == '/' || p[1] == '\\')) {
		return p
	}
	return base + p
}

// CookiePath is the Path of the site's cookies under base: base + "/", so that a
// browser sends them to the site's pages and to nothing else on the host.
func CookiePath(base string) string { return base + "/" }

// Clean checks a base path given by an operator (--base-path) or a web server
// (SCRIPT_NAME) and returns it in the form With expects: "" and "/" are the
// root; a trailing "/" is dropped. The error says what to change.
func Clean(s string) (string, error) {
	if s == "" || s == "/" {
		return "", nil
	}
	if s[0] != '/' {
		return "", fmt.Errorf("base path %q must start with \"/\", e.g. /library", s)
	}
	s = strings.TrimSuffix(s, "/")
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == '\\' || r == '?' || r == '#' || r == '%' || r == '"' || r == '<' || r == '>' || r == '\'' {
			return "", fmt.Errorf("base path %q: use letters, digits and - _ . ~ / only (no spaces, quotes, %%, ?, # or backslash)", s)
		}
	}
	for _, seg := range strings.Split(s[1:], "/") {
		switch seg {
		case "":
			return "", fmt.Errorf("base path %q has an empty segment (\"//\"): write it as /a/b", s)
		case ".", "..":
			return "", fmt.Errorf("base path %q has a %q segment: give the path as the browser sees it, e.g. /library", s, seg)
		}
	}
	if u, err := url.Parse(s); err != nil || u.Path != s {
		return "", fmt.Errorf("base path %q is not a plain URL path", s)
	}
	return s, nil
}

// Strip returns the routed path of path under base: "/library/checkout" under
// "/library" is "/checkout", "/library/" is "/"; ok is false for a path outside
// the base ("/libraryx", "/other") and for "/library" itself.
func Strip(base, path string) (rest string, ok bool) {
	if base == "" {
		return path, true
	}
	rest, ok = strings.CutPrefix(path, base)
	if !ok || rest == "" || rest[0] != '/' {
		return "", false
	}
	return rest, true
}

// Mount serves next under base, for a server that sees the whole path (stacks
// serve behind a proxy that passes /library/... through unchanged, stacks
// fcgi). A request under the base reaches next with the base cut from its path
// and kept in its context; base itself without the slash is redirected to
// base + "/" (keeping the query); anything else is 404. With base "" it is next.
func Mount(base string, next http.Handler) http.Handler {
	return mount(base, next, true)
}

// Guard answers as Mount does outside base, and passes a request under base to
// next as it came (for a CGI host, which splits the path itself).
func Guard(base string, next http.Handler) http.Handler {
	return mount(base, next, false)
}

func mount(base string, next http.Handler, strip bool) http.Handler {
	if base == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == base {
			toSlash(w, r, base)
			return
		}
		rest, ok := Strip(base, r.URL.Path)
		if !ok {
			http.Error(w, "Not found: this server answers under "+base+"/ only.", http.StatusNotFound)
			return
		}
		if strip {
			r = Rebase(r, base, rest)
		}
		next.ServeHTTP(w, r)
	})
}

// toSlash redirects base to base + "/", keeping the query: the site's cookies
// have the path base + "/", which a browser does not send to base itself.
func toSlash(w http.ResponseWriter, r *http.Request, base string) {
	target := base + "/"
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, target, http.StatusMovedPermanently)
}

// CGI routes a CGI program's one request, as the web server split it: base is
// the base path (SCRIPT_NAME, or the operator's override, cleaned by Clean)
// and pathInfo the routed path (PATH_INFO). An empty PATH_INFO under a base is
// redirected to base + "/"; with neither, the request is served as it came
// (its path from REQUEST_URI), as at the root.
func CGI(base, pathInfo string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case pathInfo != "":
			next.ServeHTTP(w, Rebase(r, base, pathInfo))
		case base != "":
			toSlash(w, r, base)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// Rebase returns a shallow copy of r routed at path rest under base: its URL's
// path is rest (its raw path, kept when it still spells rest), and its context
// carries base.
func Rebase(r *http.Request, base, rest string) *http.Request {
	r2 := r.WithContext(With(r.Context(), base))
	u := *r.URL
	u.Path = rest
	u.RawPath = ""
	if raw, ok := Strip(base, r.URL.RawPath); ok && r.URL.RawPath != "" {
		if p, err := url.PathUnescape(raw); err == nil && p == rest {
			u.RawPath = raw
		}
	}
	r2.URL = &u
	return r2
}

// Sessions is the session middleware of a site that may be mounted anywhere: sm's
// LoadAndSave, with the session cookie's Path under the request's base path, and
// Secure whenever the request arrived over TLS (r.TLS is set by Go's TLS server
// and, for HTTPS=on, by its CGI and FastCGI request readers), besides when sm
// already marks it Secure. A copy of the manager per (base, TLS) pair shares the
// store and the context key, so sm's Get and Put read and write the same session;
// the copies are kept (a server has one base, a FastCGI process one per mount).
func Sessions(sm *scs.SessionManager, next http.Handler) http.Handler {
	root := sm.LoadAndSave(next)
	var copies sync.Map
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := From(r.Context())
		secure := r.TLS != nil && !sm.Cookie.Secure
		if base == "" && !secure {
			root.ServeHTTP(w, r)
			return
		}
		key := sessionKey{base, secure}
		h, ok := copies.Load(key)
		if !ok {
			c := *sm
			c.Cookie.Path = CookiePath(base)
			c.Cookie.Secure = c.Cookie.Secure || secure
			h, _ = copies.LoadOrStore(key, c.LoadAndSave(next))
		}
		h.(http.Handler).ServeHTTP(w, r)
	})
}

type sessionKey struct {
	base   string
	secure bool
}
