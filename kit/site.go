package kit

import (
	"log/slog"
	"net/http"
	"sync"

	"github.com/a-h/templ"
	"github.com/alexedwards/scs/v2"
)

// Site is what each site's Server embeds: its logger and session manager, the
// helpers every handler calls on them, and the site's handler, built on the
// first request (ServeHTTP) so that a Server's exported fields can still be set
// between New and serving.
type Site struct {
	Logger   *slog.Logger
	Sessions *scs.SessionManager

	build   func() http.Handler
	once    sync.Once
	handler http.Handler
}

// SetHandler sets the function that builds the site's handler; a Server calls it
// in its constructor, once the Server exists (its Handler method is the usual one).
func (s *Site) SetHandler(build func() http.Handler) { s.build = build }

// ServeHTTP serves a request through the handler the site builds once.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.once.Do(func() { s.handler = s.build() })
	s.handler.ServeHTTP(w, r)
}

// Flash queues a message for the next page this session sees.
func (s *Site) Flash(r *http.Request, kind, text string) {
	AddFlash(r.Context(), s.Sessions, kind, text)
}

// Render writes component c with the given status (see the function Render).
func (s *Site) Render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	Render(w, r, s.Logger, status, c)
}
