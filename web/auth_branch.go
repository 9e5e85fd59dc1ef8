package web

import (
	"context"
	"net/http"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/staff"
)

// The branch a desk works at belongs to the workstation: staff choose it at
// sign-in (their account's home branch unless they choose another) and may
// change it on the Change branch page. The session keeps it (sessBranch), so
// every desk action of the session happens there; a cookie of its own keeps
// this browser's last choice, which the login form offers first.
const (
	// branchCookie holds the code of the branch last chosen in this browser.
	branchCookie = "stacks_branch"
	// branchMaxAge is as long as the workstation settings are kept.
	branchMaxAge = workstationMaxAge
)

// chosenBranch returns the branch code this browser last chose, or "".
func chosenBranch(r *http.Request) string {
	c, err := r.Cookie(branchCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

// rememberBranch keeps code as this browser's choice ("" forgets it: the login
// form offers the account's home branch again).
func (s *Server) rememberBranch(w http.ResponseWriter, r *http.Request, code string) {
	c := &http.Cookie{
		Name:     branchCookie,
		Value:    code,
		Path:     cookiePath(r),
		MaxAge:   int(branchMaxAge / time.Second),
		HttpOnly: true,
		Secure:   s.cfg.SecureCookies || r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	}
	if code == "" {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// workAt keeps in the session the branch the signed-in user works at.
func (s *Server) workAt(r *http.Request, u *staff.User, branchID int64) {
	if branchID == u.HomeBranchID {
		s.Sessions.Remove(r.Context(), sessBranch)
		return
	}
	s.Sessions.Put(r.Context(), sessBranch, branchID)
}

// branches lists the branches staff may work at, for the login and Change
// branch forms.
func (s *Server) branches(r *http.Request) ([]library.Branch, error) {
	return s.Staff.Branches(r.Context())
}

// branchService is what the Change branch page needs (staff.Service).
type branchService interface {
	Branches(ctx context.Context) ([]library.Branch, error)
	ChangeBranch(ctx context.Context, u *staff.User, code string) (library.Branch, error)
}

var _ branchService = (*staff.Service)(nil)

// BranchView is the Change branch form.
type BranchView struct {
	Branches []library.Branch
	// Branch is the chosen branch's code.
	Branch string
	Errors FormErrors
}

func (s *Server) handleBranchForm(w http.ResponseWriter, r *http.Request) {
	v := &BranchView{Branch: userFrom(r.Context()).BranchCode, Errors: FormErrors{}}
	var err error
	if v.Branches, err = s.branches(r); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, BranchPage(s.page(r, "Change branch", ""), v))
}

// handleBranch moves the signed-in user's desk to another branch, for the rest
// of the session, and makes it this browser's choice at the next sign-in.
func (s *Server) handleBranch(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	v := &BranchView{Branch: r.PostFormValue("branch"), Errors: FormErrors{}}
	b, err := s.Staff.ChangeBranch(r.Context(), u, v.Branch)
	if err != nil {
		if stacks.ErrorCode(err) != stacks.EINVALID {
			s.Error(w, r, err)
			return
		}
		v.Errors["branch"] = stacks.ErrorMessage(err)
		if v.Branches, err = s.branches(r); err != nil {
			s.Error(w, r, err)
			return
		}
		s.Render(w, r, http.StatusUnprocessableEntity, BranchPage(s.page(r, "Change branch", ""), v))
		return
	}
	s.workAt(r, u, b.ID)
	s.rememberBranch(w, r, b.Code)
	s.Flash(r, "ok", "You are working at "+b.Name+" now: check-ins, checkouts and transfers happen there.")
	redirect(w, r, "/", http.StatusSeeOther)
}
