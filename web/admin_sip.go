package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/sip"
)

// sipAccountsService is what the SIP accounts pages need of package sip.
type sipAccountsService interface {
	Overview(ctx context.Context) (sip.Overview, error)
	Create(ctx context.Context, actor stacks.Actor, n sip.NewAccount) (*sip.Account, error)
	Account(ctx context.Context, id int64) (*sip.Account, []library.Branch, error)
	Update(ctx context.Context, actor stacks.Actor, id int64, u sip.AccountUpdate) (*sip.Account, error)
	SetActive(ctx context.Context, actor stacks.Actor, id int64, active bool) error
	SetPassword(ctx context.Context, actor stacks.Actor, id int64, password string) error
	ClearLockout(ctx context.Context, actor stacks.Actor, key string) error
}

// AdminSIPView is the SIP accounts page: the accounts self-check machines and
// sorters log in with, the form that adds one, and the lockouts running.
type AdminSIPView struct {
	Accounts []sip.Account
	Branches []library.Branch
	Lockouts []sip.ListedLockout
	// Add is the new-account form, as typed (but the password).
	Add sip.NewAccount
	// Errors are keyed by field of the add form: "username", "password",
	// "institution", "branch".
	Errors FormErrors
	Loc    *time.Location
}

func (s *Server) renderAdminSIP(w http.ResponseWriter, r *http.Request, status int, change func(*AdminSIPView)) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	o, err := s.lib.sip.Overview(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := AdminSIPView{Accounts: o.Accounts, Branches: o.Branches, Lockouts: o.Lockouts, Errors: FormErrors{}, Loc: prefs.Location}
	if len(v.Branches) > 0 {
		v.Add.BranchCode = v.Branches[0].Code
	}
	if change != nil {
		change(&v)
	}
	s.Render(w, r, status, AdminSIPPage(s.page(r, "SIP accounts", "admin"), &v))
}

func (s *Server) handleAdminSIP(w http.ResponseWriter, r *http.Request) {
	s.renderAdminSIP(w, r, http.StatusOK, nil)
}

// handleAdminSIPCreate adds an account. A refused field shows the form again with
// what was typed (but the password) and the message beside the field.
func (s *Server) handleAdminSIPCreate(w http.ResponseWriter, r *http.Request) {
	n := sip.NewAccount{
		Username:    strings.TrimSpace(r.PostFormValue("username")),
		Password:    r.PostFormValue("password"),
		Institution: strings.TrimSpace(r.PostFormValue("institution")),
		BranchCode:  r.PostFormValue("branch"),
	}
	a, err := s.lib.sip.Create(r.Context(), userFrom(r.Context()).Actor(), n)
	if field := stacks.ErrorField(err); err != nil && field != "" {
		s.renderAdminSIP(w, r, http.StatusUnprocessableEntity, func(v *AdminSIPView) {
			n.Password, n.PasswordHash = "", ""
			v.Add = n
			v.Errors[field] = stacks.ErrorMessage(err)
		})
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "SIP account "+a.Username+" created for institution "+a.Institution+" at "+a.BranchName+". Open it in the list to change its settings.")
	redirect(w, r, "/admin/sip", http.StatusSeeOther)
}

// AdminSIPForm is an account's settings form, as typed, so that a refused form
// comes back unchanged with the messages beside the fields.
type AdminSIPForm struct {
	Account           *sip.Account
	Branches          []library.Branch
	Institution       string
	BranchCode        string
	CheckedInOK       bool
	HoldItems         sip.HoldItems
	UseServerBins     bool
	SortBins          string
	Denied            []string
	ContactWithoutPIN bool
	SameItemCheckout  sip.SameItemCheckout
	Language          string
	// Errors are keyed by field: "institution", "branch", "hold_items",
	// "sort_bins", "denied", "same_item", "language", and "password" for the
	// reset form.
	Errors FormErrors
	Loc    *time.Location
}

// Allows reports whether the form has message id allowed (its box checked).
func (f *AdminSIPForm) Allows(id string) bool { return !slices.Contains(f.Denied, id) }

// newAdminSIPForm fills the form from the stored account.
func newAdminSIPForm(a *sip.Account) AdminSIPForm {
	return AdminSIPForm{
		Account:           a,
		Institution:       a.Institution,
		BranchCode:        a.BranchCode,
		CheckedInOK:       a.Settings.CheckedInOK,
		HoldItems:         a.Settings.HoldItems,
		UseServerBins:     a.Settings.SortBins == nil,
		SortBins:          a.Settings.SortBins.String(),
		Denied:            a.Settings.Denied,
		ContactWithoutPIN: a.Settings.ContactWithoutPIN,
		SameItemCheckout:  a.Settings.SameItemCheckout,
		Language:          a.Settings.Language,
		Errors:            FormErrors{},
	}
}

// parseAdminSIPForm reads the posted settings into the form (over the stored
// account's) and the update to save. A message is denied when its box is not
// checked: the form lists every one sip.Messages has.
func parseAdminSIPForm(r *http.Request, f *AdminSIPForm) sip.AccountUpdate {
	f.Institution = strings.TrimSpace(r.PostFormValue("institution"))
	f.BranchCode = r.PostFormValue("branch")
	f.CheckedInOK = r.PostFormValue("checked_in_ok") == "1"
	f.HoldItems = sip.HoldItems(r.PostFormValue("hold_items"))
	f.UseServerBins = r.PostFormValue("sort_bins_source") != "own"
	f.SortBins = strings.TrimSpace(r.PostFormValue("sort_bins"))
	f.ContactWithoutPIN = r.PostFormValue("contact_without_pin") == "1"
	f.SameItemCheckout = sip.SameItemCheckout(r.PostFormValue("same_item"))
	f.Language = r.PostFormValue("language")
	allowed := r.PostForm["allowed"]
	f.Denied = nil
	for _, m := range sip.Messages {
		if !slices.Contains(allowed, m.ID) {
			f.Denied = append(f.Denied, m.ID)
		}
	}
	return sip.AccountUpdate{
		Institution: f.Institution,
		BranchCode:  f.BranchCode,
		Settings: sip.Settings{
			CheckedInOK:       f.CheckedInOK,
			HoldItems:         f.HoldItems,
			Denied:            f.Denied,
			ContactWithoutPIN: f.ContactWithoutPIN,
			SameItemCheckout:  f.SameItemCheckout,
			Language:          f.Language,
		},
		SortBins:      f.SortBins,
		UseServerBins: f.UseServerBins,
	}
}

// readAdminSIPForm reads the account's form as stored, with the branches it
// chooses from.
func (s *Server) readAdminSIPForm(r *http.Request, id int64) (AdminSIPForm, error) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		return AdminSIPForm{}, err
	}
	a, branches, err := s.lib.sip.Account(r.Context(), id)
	if err != nil {
		return AdminSIPForm{}, err
	}
	f := newAdminSIPForm(a)
	f.Branches, f.Loc = branches, prefs.Location
	return f, nil
}

func (s *Server) renderAdminSIPForm(w http.ResponseWriter, r *http.Request, status int, f *AdminSIPForm) {
	s.Render(w, r, status, AdminSIPAccountPage(s.page(r, "SIP account "+f.Account.Username, "admin"), f))
}

func (s *Server) handleAdminSIPEdit(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	f, err := s.readAdminSIPForm(r, id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.renderAdminSIPForm(w, r, http.StatusOK, &f)
}

// handleAdminSIPUpdate saves an account's institution, branch and settings. The
// terminals logged in with it see the change within seconds.
func (s *Server) handleAdminSIPUpdate(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	var typed AdminSIPForm
	u := parseAdminSIPForm(r, &typed)
	a, err := s.lib.sip.Update(r.Context(), userFrom(r.Context()).Actor(), id, u)
	switch {
	case isAdminFormError(err) && stacks.ErrorField(err) != "":
		// Shown again as typed, over the account as stored.
		f, rerr := s.readAdminSIPForm(r, id)
		if rerr != nil {
			s.Error(w, r, rerr)
			return
		}
		parseAdminSIPForm(r, &f)
		adminFormError(f.Errors, err)
		s.renderAdminSIPForm(w, r, http.StatusUnprocessableEntity, &f)
		return
	case err != nil:
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Settings of "+a.Username+" saved. Its terminals use them within seconds, without logging in again.")
	redirect(w, r, adminSIPPath(id), http.StatusSeeOther)
}

// handleAdminSIPActive deactivates (active=0) or reactivates (active=1) an
// account.
func (s *Server) handleAdminSIPActive(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	active := r.PostFormValue("active") == "1"
	err := s.lib.sip.SetActive(r.Context(), userFrom(r.Context()).Actor(), id, active)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	msg := "The SIP account is deactivated: it cannot log in, and its terminals are disconnected within seconds."
	if active {
		msg = "The SIP account is active again: its terminals can log in."
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, adminSIPPath(id), http.StatusSeeOther)
}

// handleAdminSIPPassword sets an account's new password, hashed before the write
// transaction. The terminals logged in stay so; they need it at their next login.
func (s *Server) handleAdminSIPPassword(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	err := s.lib.sip.SetPassword(r.Context(), userFrom(r.Context()).Actor(), id, r.PostFormValue("password"))
	if stacks.ErrorField(err) == "password" {
		f, rerr := s.readAdminSIPForm(r, id)
		if rerr != nil {
			s.Error(w, r, rerr)
			return
		}
		f.Errors["password"] = stacks.ErrorMessage(err)
		s.renderAdminSIPForm(w, r, http.StatusUnprocessableEntity, &f)
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "The password is changed. Enter it in the machine's SIP settings: terminals logged in now keep working until they log in again.")
	redirect(w, r, adminSIPPath(id), http.StatusSeeOther)
}

// handleAdminSIPLockoutClear lifts a lockout, named by its key in the form (keys
// hold "|" and ":", which a path would have to escape).
func (s *Server) handleAdminSIPLockoutClear(w http.ResponseWriter, r *http.Request) {
	key := r.PostFormValue("key")
	err := s.lib.sip.ClearLockout(r.Context(), userFrom(r.Context()).Actor(), key)
	switch stacks.ErrorCode(err) {
	case "":
		s.Flash(r, "ok", "Lockout lifted: the next attempt is compared again, and its failures count from zero.")
	case stacks.ENOTFOUND:
		s.Flash(r, "info", stacks.ErrorMessage(err))
	default:
		s.Error(w, r, err)
		return
	}
	redirect(w, r, "/admin/sip", http.StatusSeeOther)
}

// adminSIPPath is the page of an account.
func adminSIPPath(id int64) string { return "/admin/sip/" + adminID(id) }

// adminSIPLastSeen says when and from where a terminal last used an account.
func adminSIPLastSeen(a *sip.Account, loc *time.Location) string {
	if a.LastSeenAt.IsZero() {
		return "never"
	}
	s := formatDateTime(a.LastSeenAt, loc)
	if a.LastSeenAddr != "" {
		s += " from " + a.LastSeenAddr
	}
	return s
}

// adminSIPSummary is an account's settings on one line, where they differ from
// the defaults and always the hold items and sort bins:
// "hold items as barcodes; server's sort bins; checked_in_ok; denied: Checkout, Renew".
func adminSIPSummary(s sip.Settings) string {
	parts := []string{"hold items as " + adminSIPHoldItems(s.HoldItems)}
	switch {
	case s.SortBins == nil:
		parts = append(parts, "server's sort bins")
	case len(s.SortBins) == 0:
		parts = append(parts, "no sort bins")
	default:
		parts = append(parts, "sort bins "+s.SortBins.String())
	}
	if s.CheckedInOK {
		parts = append(parts, "checked_in_ok")
	}
	if s.ContactWithoutPIN {
		parts = append(parts, "contact details without PIN")
	}
	if s.SameItemCheckout == sip.SameItemRenew {
		parts = append(parts, "renews an item already lent")
	}
	if s.Language != "" && s.Language != sip.LanguageUnknown {
		parts = append(parts, "language "+adminSIPLanguage(s.Language))
	}
	if len(s.Denied) > 0 {
		var names []string
		for _, m := range sip.Messages {
			if !s.Allows(m.ID) {
				names = append(names, m.Name)
			}
		}
		parts = append(parts, "denied: "+strings.Join(names, ", "))
	} else {
		parts = append(parts, "all messages allowed")
	}
	return strings.Join(parts, "; ")
}

// adminSIPHoldItems names a hold-items setting.
func adminSIPHoldItems(h sip.HoldItems) string {
	if h == sip.HoldItemsTitle {
		return "titles"
	}
	return "barcodes"
}

// adminSIPLanguage names a language code as the form lists it: "001 English".
func adminSIPLanguage(code string) string {
	if name := sip.LanguageName(code); name != code {
		return code + " " + name
	}
	return code
}

// adminSIPMessageID is the id of a message's checkbox.
func adminSIPMessageID(id string) string { return "allowed-" + id }

// adminSIPLockoutKind names a lockout's kind.
func adminSIPLockoutKind(kind string) string {
	if kind == "pin" {
		return "Wrong PINs"
	}
	return "Failed logins"
}

// lockoutRule states the SIP attempt limits, from the sip package's constants.
func lockoutRule() string {
	return fmt.Sprintf("%d failed logins of an account from one address, or %d wrong PINs of a patron from any terminal, within %d minutes lock them out for %d minutes. "+
		"%d failed logins of an account within %d minutes from addresses it has not logged in from lock it for %d minutes at every such address; terminals that logged in before keep working.",
		sip.LoginLimit, sip.PINLimit, int(sip.AttemptWindow.Minutes()), int(sip.LockoutFor.Minutes()),
		sip.AccountLoginLimit, int(sip.AccountWindow.Minutes()), int(sip.AccountLockoutFor.Minutes()))
}

// adminSIPLockoutAddress is the Address column of a lockout: the address, or
// for an account's budget the addresses it stands for.
func adminSIPLockoutAddress(l sip.Lockout) string {
	if l.Address == "" && l.Kind == "login" {
		return "any address it has not logged in from"
	}
	return l.Address
}
