package web

import (
	"context"
	"net/http"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/staff"
)

// AccountView is the signed-in user's own page: a form changing their password.
type AccountView struct {
	// Errors are keyed "current", "password" or "confirm".
	Errors FormErrors
}

func (s *Server) handleAccount(w http.ResponseWriter, r *http.Request) {
	s.Render(w, r, http.StatusOK, AccountPage(s.page(r, "My account", ""), &AccountView{Errors: FormErrors{}}))
}

// accountService changes the signed-in user's own password (staff.Service).
type accountService interface {
	ChangePassword(ctx context.Context, u *staff.User, current, password, addr string) error
}

var _ accountService = (*staff.Service)(nil)

// handleAccountPassword changes the signed-in user's password. The current one
// is checked as at sign-in, failures counting towards the same lockout, so that
// a session left open is not enough to take over the account.
func (s *Server) handleAccountPassword(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	v := &AccountView{Errors: FormErrors{}}
	refuse := func(status int, field, msg string) {
		v.Errors[field] = msg
		s.Render(w, r, status, AccountPage(s.page(r, "My account", ""), v))
	}
	password := r.PostFormValue("password")
	if password != r.PostFormValue("confirm") {
		refuse(http.StatusUnprocessableEntity, "confirm", "The two new passwords differ; type the same one twice.")
		return
	}
	err := s.Staff.ChangePassword(r.Context(), u, r.PostFormValue("current"), password, clientAddr(r))
	if field := stacks.ErrorField(err); field != "" {
		refuse(http.StatusUnprocessableEntity, field, stacks.ErrorMessage(err))
		return
	} else if stacks.ErrorCode(err) == stacks.ETOOMANY {
		refuse(http.StatusTooManyRequests, "current", stacks.ErrorMessage(err))
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	// The new password ended the account's sessions everywhere (a session
	// someone else opened with the old password, a desk left signed in); this
	// one goes on under a new token.
	if err := s.Sessions.RenewToken(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Your password is changed. You are signed out everywhere else; use the new password the next time you sign in.")
	redirect(w, r, "/account", http.StatusSeeOther)
}
