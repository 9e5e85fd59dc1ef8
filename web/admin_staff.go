package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/staff"
)

// AdminStaffView is the staff accounts page: every account with its actions, and
// the form that adds one.
type AdminStaffView struct {
	Users    []staff.User
	Branches []library.Branch
	// Me is the signed-in administrator: the page offers no deactivation of it.
	Me int64
	// Add is the new-account form, as typed.
	Add staff.NewUser
	// Errors are keyed by field ("username", "display_name", "password", "role",
	// "branch") for the add form, or "password_<id>" for an account's new password.
	Errors FormErrors
}

// staffAdminService is what the staff accounts page needs (staff.Service):
// each method opens and commits its own transaction.
type staffAdminService interface {
	Accounts(ctx context.Context) (staff.Accounts, error)
	Add(ctx context.Context, actor stacks.Actor, n staff.NewUser) (*staff.User, error)
	SetActive(ctx context.Context, actor stacks.Actor, id int64, active bool) error
	SetCanWaive(ctx context.Context, actor stacks.Actor, id int64, can bool) (*staff.User, error)
	ResetPassword(ctx context.Context, actor stacks.Actor, id int64, password string) error
}

var _ staffAdminService = (*staff.Service)(nil)

func (s *Server) renderAdminStaff(w http.ResponseWriter, r *http.Request, status int, change func(*AdminStaffView)) {
	v := AdminStaffView{Me: userFrom(r.Context()).ID, Add: staff.NewUser{Role: staff.RoleCirculation}, Errors: FormErrors{}}
	a, err := s.Staff.Accounts(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v.Users, v.Branches = a.Users, a.Branches
	if change != nil {
		change(&v)
	}
	s.Render(w, r, status, AdminStaffPage(s.page(r, "Staff accounts", "admin"), &v))
}

func (s *Server) handleAdminStaff(w http.ResponseWriter, r *http.Request) {
	s.renderAdminStaff(w, r, http.StatusOK, nil)
}

// handleAdminStaffCreate adds an account. A refused field shows the form again
// with what was typed (but the password) and the message beside the field.
func (s *Server) handleAdminStaffCreate(w http.ResponseWriter, r *http.Request) {
	n := staff.NewUser{
		Username:    strings.TrimSpace(r.PostFormValue("username")),
		DisplayName: strings.TrimSpace(r.PostFormValue("display_name")),
		Password:    r.PostFormValue("password"),
		Role:        r.PostFormValue("role"),
		BranchCode:  r.PostFormValue("branch"),
	}
	u, err := s.Staff.Add(r.Context(), userFrom(r.Context()).Actor(), n)
	if field := stacks.ErrorField(err); err != nil && field != "" {
		s.renderAdminStaff(w, r, http.StatusUnprocessableEntity, func(v *AdminStaffView) {
			n.Password, n.PasswordHash = "", ""
			v.Add = n
			v.Errors[field] = stacks.ErrorMessage(err)
		})
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Account "+u.Username+" created for "+u.DisplayName+" at "+u.BranchName+".")
	redirect(w, r, "/admin/staff", http.StatusSeeOther)
}

// handleAdminStaffActive deactivates (active=0) or reactivates (active=1) an
// account.
func (s *Server) handleAdminStaffActive(w http.ResponseWriter, r *http.Request) {
	id, err := staffID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	active := r.PostFormValue("active") == "1"
	err = s.Staff.SetActive(r.Context(), userFrom(r.Context()).Actor(), id, active)
	switch stacks.ErrorCode(err) {
	case "":
	case stacks.EFORBIDDEN, stacks.ECONFLICT:
		s.Flash(r, "error", stacks.ErrorMessage(err))
		redirect(w, r, "/admin/staff", http.StatusSeeOther)
		return
	default:
		s.Error(w, r, err)
		return
	}
	msg := "The account is deactivated: it cannot sign in, and its open sessions end at their next page."
	if active {
		msg = "The account is active again."
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, "/admin/staff", http.StatusSeeOther)
}

// handleAdminStaffWaive gives (can_waive=1, the ticked checkbox) or takes away
// an account's waive permission.
func (s *Server) handleAdminStaffWaive(w http.ResponseWriter, r *http.Request) {
	id, err := staffID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	can := r.PostFormValue("can_waive") == "1"
	u, err := s.Staff.SetCanWaive(r.Context(), userFrom(r.Context()).Actor(), id, can)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	msg := u.Username + " may not waive fines now."
	if can {
		msg = u.Username + " may waive fines now."
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, "/admin/staff", http.StatusSeeOther)
}

// handleAdminStaffPassword sets an account's new password.
func (s *Server) handleAdminStaffPassword(w http.ResponseWriter, r *http.Request) {
	id, err := staffID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	me := userFrom(r.Context())
	// A reset ends the account's sessions: whoever signed in with the old
	// password (the reason for a reset, often) is signed out.
	err = s.Staff.ResetPassword(r.Context(), me.Actor(), id, r.PostFormValue("password"))
	if stacks.ErrorField(err) == "password" {
		s.renderAdminStaff(w, r, http.StatusUnprocessableEntity, func(v *AdminStaffView) {
			v.Errors[passwordKey(id)] = stacks.ErrorMessage(err)
		})
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	if id == me.ID {
		// An administrator who reset their own password stays signed in here.
		if err := s.Sessions.RenewToken(r.Context()); err != nil {
			s.Error(w, r, err)
			return
		}
	}
	s.Flash(r, "ok", "The password is changed and the account is signed out everywhere; give the password to its owner in person.")
	redirect(w, r, "/admin/staff", http.StatusSeeOther)
}

func staffID(r *http.Request) (int64, error) {
	return pathID(r, "There is no staff account at "+r.URL.Path+". Choose one from the list.")
}

// passwordKey is the form-error key of an account's new-password field.
func passwordKey(id int64) string { return "password_" + strconv.FormatInt(id, 10) }

// staffRoleName is a role as staff read it.
func staffRoleName(role string) string {
	if role == staff.RoleAdmin {
		return "Administrator"
	}
	return "Circulation staff"
}

// adminStaffPasswordError reports whether the page's error is about an account's
// new password rather than the add form.
func adminStaffPasswordError(v *AdminStaffView) bool {
	for k := range v.Errors {
		if strings.HasPrefix(k, "password_") {
			return true
		}
	}
	return false
}
