package web

import (
	"net/http"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/kit"
)

// The staff site may be served under a sub-path (stacks serve --base-path, or a
// CGI or FastCGI mount such as /cgi-bin/stacks): every URL the site emits goes
// through these, which put the request's base path back in front (kit.At).
var (
	// at is for an href, src, action or formaction.
	at = kit.At
	// atString is at for attributes that take a plain string (hx-post, data-*-url).
	atString = basepath.URL
	redirect = kit.Redirect
	refresh  = kit.Refresh
	// cookiePath is the Path of the site's own cookies (the workstation's).
	cookiePath = kit.CookiePath
)

// loadSession is the session middleware: s.Sessions' LoadAndSave with the cookie
// under the request's base path, Secure over TLS (basepath.Sessions).
func (s *Server) loadSession(next http.Handler) http.Handler {
	return basepath.Sessions(s.Sessions, next)
}
