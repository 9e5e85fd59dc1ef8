package opac

import (
	"context"
	"net/http"
	"sync"

	"github.com/a-h/templ"

	"github.com/stacks-ils/stacks/basepath"
)

// The patrons' site may be served under a sub-path (stacks serve
// --opac-base-path): the router sees the routed path only, and every URL the
// site emits goes through at or redirect, which put the request's base path
// back in front (package basepath). Handlers and view models keep routed paths
// ("/records/7"), never the base; absolute URLs come from Server.baseURL.

// at returns the site path p under the request's base path, for an href, src,
// action or formaction. An external URL, a fragment or "mailto:" is returned as
// it is.
func at(ctx context.Context, p string) templ.SafeURL {
	return templ.SafeURL(basepath.URL(ctx, p))
}

// redirect sends the browser to the site path p under the request's base path.
func redirect(w http.ResponseWriter, r *http.Request, p string, code int) {
	http.Redirect(w, r, basepath.URL(r.Context(), p), code)
}

// loadSession is the session middleware: s.Sessions' LoadAndSave, with the
// session cookie's Path under the request's base path. A copy of the session
// manager per base path shares the store and the context key, so s.Sessions'
// Get and Put read and write the same session; the copies are kept, one per
// base (a server has one base).
func (s *Server) loadSession(next http.Handler) http.Handler {
	root := s.Sessions.LoadAndSave(next)
	var byBase sync.Map
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := basepath.From(r.Context())
		if base == "" {
			root.ServeHTTP(w, r)
			return
		}
		h, ok := byBase.Load(base)
		if !ok {
			sm := *s.Sessions
			sm.Cookie.Path = basepath.CookiePath(base)
			h, _ = byBase.LoadOrStore(base, sm.LoadAndSave(next))
		}
		h.(http.Handler).ServeHTTP(w, r)
	})
}
