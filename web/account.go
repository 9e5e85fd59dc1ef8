package web

import (
	"net/http"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/staff"
)

// AccountView is the signed-in user's own page: a form changing their password.
type AccountView struct {
	// Errors are keyed "current", "password" or "confirm".
	Errors FormErrors
}

func (s *Server) handleAccount(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, AccountPage(s.page(r, "My account", ""), &AccountView{Errors: FormErrors{}}))
}

// handleAccountPassword changes the signed-in user's password. The current one
// is checked as at sign-in, failures counting towards the same lockout, so that
// a session left open is not enough to take over the account.
func (s *Server) handleAccountPassword(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	v := &AccountView{Errors: FormErrors{}}
	refuse := func(status int, field, msg string) {
		v.Errors[field] = msg
		s.render(w, r, status, AccountPage(s.page(r, "My account", ""), v))
	}
	password := r.PostFormValue("password")
	if password != r.PostFormValue("confirm") {
		refuse(http.StatusUnprocessableEntity, "confirm", "The two new passwords differ; type the same one twice.")
		return
	}
	if err := staff.ValidateNewPassword(password); err != nil {
		refuse(http.StatusUnprocessableEntity, "password", stacks.ErrorMessage(err))
		return
	}
	// The current password is checked first, through the sign-in throttle and the
	// bounded comparison pool: the new one is hashed only for its owner, so that
	// guessing here costs no more than guessing at the login form.
	if _, err := s.Staff.Authenticate(r.Context(), u.Username, r.PostFormValue("current"), clientAddr(r)); err != nil {
		switch stacks.ErrorCode(err) {
		case stacks.EINTERNAL:
			s.Error(w, r, err)
		case stacks.ETOOMANY:
			refuse(http.StatusTooManyRequests, "current", stacks.ErrorMessage(err))
		default:
			refuse(http.StatusUnprocessableEntity, "current", "That is not your current password.")
		}
		return
	}
	hash, err := staff.HashNewPassword(password)
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "password", stacks.ErrorMessage(err))
		return
	}
	// The new password ends the account's sessions everywhere (a session someone
	// else opened with the old password, a desk left signed in); this one goes on
	// under a new token.
	err = s.DB.Write(r.Context(), func(tx *db.Tx) error {
		if err := staff.SetPasswordHash(tx, u.Actor(), u.ID, hash); err != nil {
			return err
		}
		_, err := endSessionsOf(tx, u.ID)
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if err := s.Sessions.RenewToken(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.flash(r, "ok", "Your password is changed. You are signed out everywhere else; use the new password the next time you sign in.")
	redirect(w, r, "/account", http.StatusSeeOther)
}
