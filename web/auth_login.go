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

// branchInvalid is the Branch select's aria-invalid.
func (f *LoginForm) branchInvalid() string {
	if f.BranchError != "" {
		return "true"
	}
	return "false"
}

// renderLogin shows the login form with the branches to choose from.
func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, form LoginForm) {
	var err error
	if form.Branches, err = s.branches(r); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, status, LoginPage(s.page(r, "Log in", ""), form))
}

func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	if u, _, err := s.currentUser(r); err == nil && u != nil {
		redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	// The Branch select offers first the branch this browser chose last.
	s.renderLogin(w, r, http.StatusOK, LoginForm{Next: safeNext(r.URL.Query().Get("next")), Branch: chosenBranch(r)})
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
		Branch:   strings.TrimSpace(r.PostFormValue("branch")),
	}
	// A form without a Branch field (a script's) signs in at the home branch.
	_, chose := r.PostForm["branch"]
	user, err := s.Staff.SignIn(r.Context(), form.Username, r.PostFormValue("password"), clientAddr(r), form.Branch)
	if err != nil {
		code := stacks.ErrorCode(err)
		if code == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		if stacks.ErrorField(err) == "branch" {
			form.BranchError = stacks.ErrorMessage(err)
		} else {
			form.Error = stacks.ErrorMessage(err)
		}
		status := http.StatusUnauthorized
		if code == stacks.ETOOMANY {
			status = http.StatusTooManyRequests
		} else if code == stacks.EINVALID {
			status = http.StatusUnprocessableEntity
		}
		s.renderLogin(w, r, status, form)
		return
	}
	// A new token at sign-in defeats session fixation.
	if err := s.Sessions.RenewToken(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Sessions.Put(r.Context(), sessUserID, user.ID)
	s.Sessions.Put(r.Context(), sessSeen, s.DB.Now().Unix())
	s.workAt(r, user, user.BranchID)
	if chose {
		code := ""
		if form.Branch != "" {
			code = user.BranchCode
		}
		s.rememberBranch(w, r, code)
	}
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
	s.Flash(r, "ok", "You have logged out.")
	redirect(w, r, "/login", http.StatusSeeOther)
}
