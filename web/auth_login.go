package web

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/stacks-ils/stacks"
)

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// safeNext returns next if it is a path on this site (isLocalPath), else "/": the
// login form must not become an open redirect.
func safeNext(next string) string {
	if !isLocalPath(next) {
		return "/"
	}
	return next
}

func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	if u, _, err := s.currentUser(r); err == nil && u != nil {
		redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	s.render(w, r, http.StatusOK, LoginPage(s.page(r, "Log in", ""), LoginForm{Next: safeNext(r.URL.Query().Get("next"))}))
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	form := LoginForm{
		Username: strings.TrimSpace(r.PostFormValue("username")),
		Next:     safeNext(r.PostFormValue("next")),
	}
	user, err := s.Staff.Authenticate(r.Context(), form.Username, r.PostFormValue("password"), clientAddr(r))
	if err != nil {
		code := stacks.ErrorCode(err)
		if code == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		form.Error = stacks.ErrorMessage(err)
		status := http.StatusUnauthorized
		if code == stacks.ETOOMANY {
			status = http.StatusTooManyRequests
		} else if code == stacks.EINVALID {
			status = http.StatusUnprocessableEntity
		}
		s.render(w, r, status, LoginPage(s.page(r, "Log in", ""), form))
		return
	}
	// A new token at sign-in defeats session fixation.
	if err := s.Sessions.RenewToken(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Sessions.Put(r.Context(), sessUserID, user.ID)
	s.Sessions.Put(r.Context(), sessSeen, s.DB.Now().Unix())
	s.renewWorkstation(w, r)
	redirect(w, r, form.Next, http.StatusSeeOther)
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	// Nobody is signed in: nothing to end, and nothing to write (a flash would
	// store a new session for every anonymous post).
	if s.Sessions.GetInt64(r.Context(), sessUserID) == 0 {
		redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	// Destroy deletes the session from the database; the flash below starts a new
	// one under a new token.
	if err := s.Sessions.Destroy(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.flash(r, "ok", "You have logged out.")
	redirect(w, r, "/login", http.StatusSeeOther)
}
