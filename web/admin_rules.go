package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/library"
)

// rulesService is what the circulation rules pages ask of circulation.
type rulesService interface {
	Rules(ctx context.Context) ([]circulation.Rule, error)
	RuleScopes(ctx context.Context) (circulation.RuleScopes, error)
	RuleToEdit(ctx context.Context, id int64) (circulation.Rule, circulation.RuleScopes, error)
	SaveRule(ctx context.Context, actor stacks.Actor, r circulation.Rule, accept func(circulation.RuleScopes) bool) (circulation.Rule, circulation.RuleScopes, error)
	RuleWithScope(ctx context.Context, r circulation.Rule) (int64, error)
	DeleteRule(ctx context.Context, actor stacks.Actor, id int64) (circulation.Rule, error)
}

// AdminRuleForm is the view model of the circulation rule form: what was typed, as
// typed, so that a refused form comes back unchanged with the messages beside it.
type AdminRuleForm struct {
	// ID is 0 for a new rule.
	ID int64
	// The scope; 0 is "Any".
	PatronCategoryID int64
	ItemTypeID       int64
	BranchID         int64

	LoanPeriod     string
	LoanUnit       string
	MaxLoans       string
	Renewals       string
	Fine           string
	GracePeriods   string
	FineCap        string
	HoldPickupDays string

	// Lost items: days overdue until lost (0 never), the processing fee, what a
	// return does to the replacement cost and to the fee.
	LostAfterDays string
	ProcessingFee string
	LostReturn    string
	LostReturnFee string
	// LostForgiveFine: the fine accrued until a loan is declared lost is forgiven.
	LostForgiveFine bool

	// The choices of the scope selects.
	Categories []library.Named
	ItemTypes  []library.Named
	Branches   []library.Branch

	// Error is a message about the whole rule (a duplicate scope); ConflictID is
	// then the rule that already has the scope, to link to.
	Error      string
	ConflictID int64
	Errors     FormErrors
}

// Action is where the form posts.
func (f *AdminRuleForm) Action() string {
	if f.ID == 0 {
		return "/admin/rules"
	}
	return "/admin/rules/" + strconv.FormatInt(f.ID, 10)
}

// newAdminRuleForm fills the form from a stored rule, or with the defaults of a
// new one.
func newAdminRuleForm(r circulation.Rule) AdminRuleForm {
	return AdminRuleForm{
		ID:               r.ID,
		PatronCategoryID: r.PatronCategoryID,
		ItemTypeID:       r.ItemTypeID,
		BranchID:         r.BranchID,
		LoanPeriod:       strconv.Itoa(r.LoanPeriod),
		LoanUnit:         r.LoanUnit,
		MaxLoans:         strconv.Itoa(r.MaxLoans),
		Renewals:         strconv.Itoa(r.Renewals),
		Fine:             formatMoney(r.FineCents),
		GracePeriods:     strconv.Itoa(r.GracePeriods),
		FineCap:          formatMoney(r.FineCapCents),
		HoldPickupDays:   strconv.Itoa(r.HoldPickupDays),
		LostAfterDays:    strconv.Itoa(r.LostAfterDays),
		ProcessingFee:    formatMoney(r.ProcessingFeeCents),
		LostReturn:       r.LostReturn,
		LostReturnFee:    r.LostReturnFee,
		LostForgiveFine:  r.LostForgiveFine,
		Errors:           FormErrors{},
	}
}

// adminDefaultRule is what the "New rule" form starts from.
var adminDefaultRule = circulation.Rule{LoanPeriod: 21, LoanUnit: "days", MaxLoans: 10, Renewals: 2, HoldPickupDays: 7}

// parseAdminRuleForm reads the posted rule. Fields that do not parse get their
// message in the form's Errors; the rule's own Validate checks the ranges.
func parseAdminRuleForm(r *http.Request, id int64) (AdminRuleForm, circulation.Rule) {
	f := AdminRuleForm{
		ID:             id,
		LoanPeriod:     strings.TrimSpace(r.PostFormValue("loan_period")),
		LoanUnit:       r.PostFormValue("loan_unit"),
		MaxLoans:       strings.TrimSpace(r.PostFormValue("max_loans")),
		Renewals:       strings.TrimSpace(r.PostFormValue("renewals")),
		Fine:           strings.TrimSpace(r.PostFormValue("fine")),
		GracePeriods:   strings.TrimSpace(r.PostFormValue("grace_periods")),
		FineCap:        strings.TrimSpace(r.PostFormValue("fine_cap")),
		HoldPickupDays: strings.TrimSpace(r.PostFormValue("hold_pickup_days")),
		LostAfterDays:  strings.TrimSpace(r.PostFormValue("lost_after_days")),
		ProcessingFee:  strings.TrimSpace(r.PostFormValue("processing_fee")),
		LostReturn:     r.PostFormValue("lost_return"),
		LostReturnFee:  r.PostFormValue("lost_return_fee"),
		// A checkbox: sent (any value) when ticked.
		LostForgiveFine: r.PostFormValue("lost_forgive_fine") != "",
		Errors:          FormErrors{},
	}
	rule := circulation.Rule{ID: id, LoanUnit: f.LoanUnit, LostReturn: f.LostReturn, LostReturnFee: f.LostReturnFee,
		LostForgiveFine: f.LostForgiveFine}

	choice := func(name, what string) int64 {
		n, err := strconv.ParseInt(r.PostFormValue(name), 10, 64)
		if err != nil || n < 0 {
			f.Errors[name] = "Choose " + what + " from the list, or Any."
			return 0
		}
		return n
	}
	f.PatronCategoryID = choice("patron_category_id", "a patron category")
	f.ItemTypeID = choice("item_type_id", "an item type")
	f.BranchID = choice("branch_id", "a branch")
	rule.PatronCategoryID, rule.ItemTypeID, rule.BranchID = f.PatronCategoryID, f.ItemTypeID, f.BranchID

	whole := func(name, value, example string) int {
		n, err := strconv.Atoi(value)
		if err != nil {
			f.Errors[name] = "Enter a whole number, for example " + example + "."
		}
		return n
	}
	rule.LoanPeriod = whole("loan_period", f.LoanPeriod, "21")
	rule.MaxLoans = whole("max_loans", f.MaxLoans, "10")
	rule.Renewals = whole("renewals", f.Renewals, "2")
	rule.GracePeriods = whole("grace_periods", f.GracePeriods, "0")
	rule.HoldPickupDays = whole("hold_pickup_days", f.HoldPickupDays, "7")

	money := func(name, value, example string) int64 {
		c, ok := parseMoney(value)
		if !ok {
			f.Errors[name] = "Enter an amount, for example " + example + "."
		}
		return c
	}
	rule.FineCents = money("fine", f.Fine, "0.25")
	rule.FineCapCents = money("fine_cap", f.FineCap, "5.00 (0 for no cap)")
	// The lost item fields are new: a form without them (an old page still open)
	// means none.
	if f.LostAfterDays != "" {
		rule.LostAfterDays = whole("lost_after_days", f.LostAfterDays, "60 (0 for never)")
	}
	if f.ProcessingFee != "" {
		rule.ProcessingFeeCents = money("processing_fee", f.ProcessingFee, "5.00")
	}
	return f, rule
}

// setChoices sets what the scope selects offer.
func (f *AdminRuleForm) setChoices(sc circulation.RuleScopes) {
	f.Categories, f.ItemTypes, f.Branches = sc.Categories, sc.ItemTypes, sc.Branches
}

// checkChoices refuses a scope that names a category, item type or branch that
// does not exist (deleted meanwhile, or a forged form).
func (f *AdminRuleForm) checkChoices() {
	named := func(list []library.Named, id int64) bool {
		for _, n := range list {
			if n.ID == id {
				return true
			}
		}
		return id == 0
	}
	if !named(f.Categories, f.PatronCategoryID) {
		f.Errors["patron_category_id"] = "That patron category no longer exists; choose one from the list, or Any."
	}
	if !named(f.ItemTypes, f.ItemTypeID) {
		f.Errors["item_type_id"] = "That item type no longer exists; choose one from the list, or Any."
	}
	branch := f.BranchID == 0
	for _, b := range f.Branches {
		branch = branch || b.ID == f.BranchID
	}
	if !branch {
		f.Errors["branch_id"] = "That branch no longer exists; choose one from the list, or Any."
	}
}

// adminRuleScope names a rule's scope for messages: "Adult, Book, any branch".
func adminRuleScope(r circulation.Rule) string {
	or := func(name, any string) string {
		if name == "" {
			return any
		}
		return name
	}
	return or(r.PatronCategoryName, "any patron category") + ", " + or(r.ItemTypeName, "any item type") + ", " + or(r.BranchName, "any branch")
}

func (s *Server) handleAdminRuleList(w http.ResponseWriter, r *http.Request) {
	rules, err := s.Circ.Rules(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, AdminRulesPage(s.page(r, "Circulation rules", "admin"), rules))
}

func (s *Server) handleAdminRuleNew(w http.ResponseWriter, r *http.Request) {
	f := newAdminRuleForm(adminDefaultRule)
	sc, err := s.Circ.RuleScopes(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	f.setChoices(sc)
	s.Render(w, r, http.StatusOK, AdminRuleFormPage(s.page(r, "New circulation rule", "admin"), &f))
}

func (s *Server) handleAdminRuleEdit(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	rule, sc, err := s.Circ.RuleToEdit(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	f := newAdminRuleForm(rule)
	f.setChoices(sc)
	s.Render(w, r, http.StatusOK, AdminRuleFormPage(s.page(r, "Edit circulation rule", "admin"), &f))
}

func (s *Server) handleAdminRuleCreate(w http.ResponseWriter, r *http.Request) {
	s.saveAdminRule(w, r, 0)
}

func (s *Server) handleAdminRuleUpdate(w http.ResponseWriter, r *http.Request) {
	if id, ok := s.adminPathID(w, r); ok {
		s.saveAdminRule(w, r, id)
	}
}

// saveAdminRule creates (id 0) or updates a rule from the posted form.
func (s *Server) saveAdminRule(w http.ResponseWriter, r *http.Request, id int64) {
	f, rule := parseAdminRuleForm(r, id)
	saved, sc, err := s.Circ.SaveRule(r.Context(), userFrom(r.Context()).Actor(), rule, func(sc circulation.RuleScopes) bool {
		f.setChoices(sc)
		f.checkChoices()
		return len(f.Errors) == 0 // else nothing is written; the form goes back
	})
	f.setChoices(sc)
	title := "New circulation rule"
	if id != 0 {
		title = "Edit circulation rule"
	}
	switch {
	case isAdminFormError(err):
		f.Error = adminFormError(f.Errors, err)
		if stacks.ErrorCode(err) == stacks.ECONFLICT {
			f.ConflictID = s.adminRuleWithScope(r, rule)
		}
		s.Render(w, r, kit.CodeStatus(stacks.ErrorCode(err)), AdminRuleFormPage(s.page(r, title, "admin"), &f))
	case err != nil:
		s.Error(w, r, err)
	case len(f.Errors) > 0:
		s.Render(w, r, http.StatusUnprocessableEntity, AdminRuleFormPage(s.page(r, title, "admin"), &f))
	default:
		s.Flash(r, "ok", "Rule saved: "+adminRuleScope(saved)+".")
		redirect(w, r, "/admin/rules", http.StatusSeeOther)
	}
}

// adminRuleWithScope returns the id of the rule with the same scope as r, or 0:
// the refused form links to it. Failing to find it only loses the link.
func (s *Server) adminRuleWithScope(req *http.Request, r circulation.Rule) int64 {
	id, err := s.Circ.RuleWithScope(req.Context(), r)
	if err != nil {
		s.Logger.Error("find the conflicting rule", "err", err)
	}
	return id
}

func (s *Server) handleAdminRuleDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	rule, err := s.Circ.DeleteRule(r.Context(), userFrom(r.Context()).Actor(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Rule deleted: "+adminRuleScope(rule)+".")
	redirect(w, r, "/admin/rules", http.StatusSeeOther)
}
