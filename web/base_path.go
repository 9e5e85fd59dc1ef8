package web

import (
	"context"
	"fmt"
	"net/http"

	"github.com/a-h/templ"

	"github.com/stacks-ils/stacks/basepath"
)

// The staff site may be served under a sub-path (stacks serve --base-path, or a
// CGI or FastCGI mount such as /cgi-bin/stacks): the router sees the routed path
// only, and every URL the site emits goes through at, atString or redirect,
// which put the request's base path back in front (package basepath). Handlers
// and view models keep routed paths ("/patrons/7"), never the base.

// at returns the site path p under the request's base path, for an href, src,
// action or formaction. An external URL, a fragment or "mailto:" is returned as
// it is.
func at(ctx context.Context, p string) templ.SafeURL {
	return templ.SafeURL(basepath.URL(ctx, p))
}

// atString is at for attributes that take a plain string (hx-post, data-*-url).
func atString(ctx context.Context, p string) string { return basepath.URL(ctx, p) }

// redirect sends the browser to the site path p under the request's base path.
func redirect(w http.ResponseWriter, r *http.Request, p string, code int) {
	http.Redirect(w, r, basepath.URL(r.Context(), p), code)
}

// refresh asks the browser to load the site path p again after seconds (the
// Refresh header, honoured without JavaScript), under the base path.
func refresh(w http.ResponseWriter, r *http.Request, seconds int, p string) {
	w.Header().Set("Refresh", fmt.Sprintf("%d; url=%s", seconds, basepath.URL(r.Context(), p)))
}

// cookiePath is the Path of the site's cookies for the request: the base path
// and a slash, "/" at the root.
func cookiePath(r *http.Request) string { return basepath.CookiePath(basepath.From(r.Context())) }

// loadSession is the session middleware: s.Sessions' LoadAndSave with the cookie
// under the request's base path, Secure over TLS (basepath.Sessions).
func (s *Server) loadSession(next http.Handler) http.Handler {
	return basepath.Sessions(s.Sessions, next)
}
