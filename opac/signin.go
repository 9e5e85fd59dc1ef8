package opac

import (
	"net"
	"net/http"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
)

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *Server) handleSignInForm(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	if patronFrom(r.Context()) != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	s.render(w, r, http.StatusOK, SignInPage(s.page(r, "Sign in", "signin"), SignInForm{Next: next}))
}

// handleSignIn checks the card and PIN (patrons.SignIn: counted, throttled, the
// same answer for an unknown card and a wrong PIN) and starts a session under a
// new token.
func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request) {
	f := SignInForm{Card: r.PostForm.Get("card"), Next: localPath(r.PostForm.Get("next"))}
	if len(f.Card) > 64 || !utf8.ValidString(f.Card) {
		f.Card = "" // not a card: not shown back
	}
	id, err := s.SignIn.Authenticate(r.Context(), r.PostForm.Get("card"), r.PostForm.Get("pin"), clientAddr(r))
	if err != nil {
		code := stacks.ErrorCode(err)
		if code == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		f.Error = stacks.ErrorMessage(err)
		s.render(w, r, errorStatus(code), SignInPage(s.page(r, "Sign in", "signin"), f))
		return
	}
	// A new token at sign-in defeats session fixation.
	if err := s.Sessions.RenewToken(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Sessions.Put(r.Context(), sessPatronID, id)
	s.Sessions.Put(r.Context(), sessSeen, s.DB.Now().Unix())
	http.Redirect(w, r, f.Next, http.StatusSeeOther)
}

func (s *Server) handleSignOut(w http.ResponseWriter, r *http.Request) {
	if s.Sessions.GetInt64(r.Context(), sessPatronID) == 0 {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if err := s.Sessions.Destroy(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.flash(r, "ok", "You have signed out. On a shared computer, close the browser too.")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
