package opac

import (
	"net/http"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/kit"
)

// The patrons' site may be served under a sub-path (stacks serve
// --opac-base-path): every URL the site emits goes through at or redirect,
// which put the request's base path back in front (kit.At); absolute URLs come
// from Server.baseURL.
var (
	at       = kit.At
	redirect = kit.Redirect
)

// loadSession is the session middleware: s.Sessions' LoadAndSave with the cookie
// under the request's base path, Secure over TLS (basepath.Sessions).
func (s *Server) loadSession(next http.Handler) http.Handler {
	return basepath.Sessions(s.Sessions, next)
}
