package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
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

func (s *Server) renderAdminStaff(w http.ResponseWriter, r *http.Request, status int, change func(*AdminStaffView)) {
	v := AdminStaffView{Me: userFrom(r.Context()).ID, Add: staff.NewUser{Role: staff.RoleCirculation}, Errors: FormErrors{}}
	err := s.DB.Read(r.Context(), func(tx *db.Tx) (err error) {
		if v.Users, err = staff.List(tx); err != nil {
			return err
		}
		v.Branches, err = library.ListBranches(tx)
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if change != nil {
		change(&v)
	}
	s.render(w, r, status, AdminStaffPage(s.page(r, "Staff accounts", "admin"), &v))
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
	// Hash before the write transaction: bcrypt takes tens of milliseconds,
	// which every desk's writes would wait for.
	err := n.Validate()
	if err == nil {
		n.PasswordHash, err = staff.HashPassword(n.Password)
	}
	var u *staff.User
	if err == nil {
		err = s.DB.Write(r.Context(), func(tx *db.Tx) (err error) {
			u, err = staff.Create(tx, n)
			if err == nil {
				err = tx.Audit(userFrom(r.Context()).Actor(), "staff.create", "staff_user", u.ID, u.Username)
			}
			return err
		})
	}
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
	s.flash(r, "ok", "Account "+u.Username+" created for "+u.DisplayName+" at "+u.BranchName+".")
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
	err = s.DB.Write(r.Context(), func(tx *db.Tx) error {
		return staff.SetActive(tx, userFrom(r.Context()).Actor(), id, active)
	})
	switch stacks.ErrorCode(err) {
	case "":
	case stacks.EFORBIDDEN, stacks.ECONFLICT:
		s.flash(r, "error", stacks.ErrorMessage(err))
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
	s.flash(r, "ok", msg)
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
	var u *staff.User
	err = s.DB.Write(r.Context(), func(tx *db.Tx) (err error) {
		if err := staff.SetCanWaive(tx, userFrom(r.Context()).Actor(), id, can); err != nil {
			return err
		}
		u, err = staff.FindByID(tx, id)
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	msg := u.Username + " may not waive fines now."
	if can {
		msg = u.Username + " may waive fines now."
	}
	s.flash(r, "ok", msg)
	redirect(w, r, "/admin/staff", http.StatusSeeOther)
}

// handleAdminStaffPassword sets an account's new password, hashed before the
// write transaction.
func (s *Server) handleAdminStaffPassword(w http.ResponseWriter, r *http.Request) {
	id, err := staffID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	me := userFrom(r.Context())
	hash, err := staff.HashNewPassword(r.PostFormValue("password"))
	if err == nil {
		// A reset ends the account's sessions: whoever signed in with the old
		// password (the reason for a reset, often) is signed out.
		err = s.DB.Write(r.Context(), func(tx *db.Tx) error {
			if err := staff.SetPasswordHash(tx, me.Actor(), id, hash); err != nil {
				return err
			}
			_, err := endSessionsOf(tx, id)
			return err
		})
	}
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
	s.flash(r, "ok", "The password is changed and the account is signed out everywhere; give the password to its owner in person.")
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
