package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// moneyRoutes mounts the ledger pages of the desk: the printable receipt of a
// payment or refund, the cash-up of a desk's day, and the claims-returned list.
// The patron page's money actions (pay, refund, charge, lost, claim) are in
// patronRoutes.
func (s *Server) moneyRoutes(r chi.Router) {
	r.Get("/receipts/{id}", s.handleReceipt)
	r.Get("/cashup", s.handleCashUp)
	r.Get("/claims-returned", s.handleClaimsReturned)
}

func i64toa(n int64) string { return strconv.FormatInt(n, 10) }

// methodLabel is a payment method as staff read it.
func methodLabel(m string) string {
	switch m {
	case patrons.MethodCash:
		return "Cash"
	case patrons.MethodCard:
		return "Card"
	case patrons.MethodOther:
		return "Other"
	}
	return m
}

// formIDs reads the positive ids posted under name; ok is false if one is not.
func formIDs(r *http.Request, name string) (ids []int64, ok bool) {
	for _, raw := range r.PostForm[name] {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n <= 0 {
			return nil, false
		}
		ids = append(ids, n)
	}
	return ids, true
}

// loanAction runs a patron page loan button (Declare lost, Claims returned) on
// the loan in the form's "loan_id" and goes back to the patron page with what
// happened.
func (s *Server) loanAction(w http.ResponseWriter, r *http.Request, do func(patronID, loanID int64) (string, error)) {
	id, loanID, err := loanForm(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	msg, err := do(id, loanID)
	s.loanDone(w, r, id, msg, err)
}

// loanForm reads the patron of the URL and the loan in the form's "loan_id".
func loanForm(r *http.Request) (patron, loan int64, err error) {
	if patron, err = patronID(r); err != nil {
		return 0, 0, err
	}
	loan, err = strconv.ParseInt(r.PostFormValue("loan_id"), 10, 64)
	if err != nil || loan <= 0 {
		return 0, 0, stacks.Errorf(stacks.EINVALID, "That is not a loan of this patron; reload the page and try again.")
	}
	return patron, loan, nil
}

// loanDone goes back to the patron page with what a loan button did (msg) or
// why it did not (err).
func (s *Server) loanDone(w http.ResponseWriter, r *http.Request, patronID int64, msg string, err error) {
	switch {
	case err != nil && stacks.ErrorCode(err) == stacks.EINTERNAL:
		s.Error(w, r, err)
		return
	case err != nil:
		s.Flash(r, "error", stacks.ErrorMessage(err))
	default:
		s.Flash(r, "ok", msg)
	}
	redirect(w, r, patronURL(patronID), http.StatusSeeOther)
}

// LostConfirmView asks to confirm a loan's declaration as lost.
type LostConfirmView struct {
	PatronID   int64
	PatronName string
	// Bill is what the declaration bills now (circulation.QuoteLost).
	Bill circulation.LostBill
	// Changed says why the page asks again: the bill changed since the last
	// confirmation page.
	Changed string
}

// lostQuestion is the confirmation's question, with the amount and its parts:
// "Declare I00003 lost and bill 12.99 (replacement 10.00 + processing 2.99)?"
func lostQuestion(b circulation.LostBill) string {
	if b.Billed() == 0 {
		return "Declare " + b.Barcode + " lost? Nothing is billed: the item has no replacement cost and the rule no processing fee."
	}
	var parts []string
	if b.ReplacementCents > 0 {
		parts = append(parts, "replacement "+formatMoney(b.ReplacementCents))
	}
	if b.ProcessingCents > 0 {
		parts = append(parts, "processing "+formatMoney(b.ProcessingCents))
	}
	if b.FineCents > 0 {
		parts = append(parts, "overdue fine until today "+formatMoney(b.FineCents))
	}
	return fmt.Sprintf("Declare %s lost and bill %s (%s)?", b.Barcode, formatMoney(b.Billed()), strings.Join(parts, " + "))
}

// handlePatronDeclareLost asks first: the patron page's "Declare lost" shows
// what it would bill (LostConfirmPage); only that page's Confirm (confirm=1,
// with the amount shown) declares the loan lost and bills the patron by the
// rule. If the bill changed in between, the confirmation is shown again with the
// new amount.
func (s *Server) handlePatronDeclareLost(w http.ResponseWriter, r *http.Request) {
	id, loanID, err := loanForm(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if r.PostFormValue("confirm") != "1" {
		bill, err := s.Circ.QuoteLost(r.Context(), id, loanID)
		if err != nil {
			s.loanDone(w, r, id, "", err)
			return
		}
		s.confirmLost(w, r, http.StatusOK, "", bill)
		return
	}
	billed, err := strconv.ParseInt(r.PostFormValue("billed"), 10, 64)
	if err != nil {
		billed = -1
	}
	bill, err := s.Circ.DeclareLostAsQuoted(r.Context(), userFrom(r.Context()).Actor(), id, loanID, billed)
	if stacks.ErrorCode(err) == stacks.ECONFLICT && bill.LoanID != 0 {
		// The bill changed since the confirmation: ask again with the new amount.
		s.confirmLost(w, r, http.StatusConflict, stacks.ErrorMessage(err), bill)
		return
	} else if err != nil {
		s.loanDone(w, r, id, "", err)
		return
	}
	msg := fmt.Sprintf("%s (%s) declared lost: billed %s (replacement cost %s, processing fee %s).",
		bill.Title, bill.Barcode, formatMoney(bill.Total()), formatMoney(bill.ReplacementCents), formatMoney(bill.ProcessingCents))
	switch {
	case bill.FineCents > 0:
		msg += " Overdue fine until today charged: " + formatMoney(bill.FineCents) + "."
	case bill.FineForgiven:
		msg += " The overdue fine until today is forgiven by the rule."
	}
	s.loanDone(w, r, id, msg, nil)
}

// confirmLost shows the confirmation of bill's declaration as lost, and why it
// asks again (changed), if it does.
func (s *Server) confirmLost(w http.ResponseWriter, r *http.Request, status int, changed string, bill circulation.LostBill) {
	v := LostConfirmView{PatronID: bill.PatronID, Changed: changed, Bill: bill}
	p, err := s.patrons.money.Patron(r.Context(), bill.PatronID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v.PatronName = p.Name()
	s.Render(w, r, status, LostConfirmPage(s.page(r, "Declare "+bill.Barcode+" lost?", "patrons"), v))
}

// handlePatronClaimReturned records that the patron says a loan was returned.
func (s *Server) handlePatronClaimReturned(w http.ResponseWriter, r *http.Request) {
	s.loanAction(w, r, func(patronID, loanID int64) (string, error) {
		if err := s.Circ.ClaimReturned(r.Context(), userFrom(r.Context()).Actor(), patronID, loanID); err != nil {
			return "", err
		}
		return "Claim recorded: the loan stops accruing fines and is listed under Claims returned until the item is found.", nil
	})
}

// handleReceipt shows the printable receipt of a payment or refund.
func (s *Server) handleReceipt(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no receipt at "+r.URL.Path+". Open it from the patron's ledger.")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	rc, err := s.patrons.money.Receipt(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, ReceiptPage(s.page(r, "Receipt "+i64toa(id), "patrons"), prefs.LibraryName, rc, prefs.Location))
}

// CashUpView is one desk's day.
type CashUpView struct {
	Library  string
	Branches []library.Branch
	Branch   library.Branch
	CashUp   patrons.CashUp
}

// handleCashUp shows the cash-up of a branch's desk for a day (today and the
// staff member's branch by default), printable.
func (s *Server) handleCashUp(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	page, err := s.patrons.money.CashUp(r.Context(), patrons.CashUpRequest{
		BranchCode: r.URL.Query().Get("branch"), DefaultBranchID: userFrom(r.Context()).Actor().BranchID,
		Day: r.URL.Query().Get("day"), Location: prefs.Location,
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := CashUpView{Library: prefs.LibraryName, Branches: page.Branches, Branch: page.Branch, CashUp: page.CashUp}
	s.Render(w, r, http.StatusOK, CashUpPage(s.page(r, "Cash-up", "patrons"), v, prefs.Location))
}

// ClaimsView lists claims returned: open ones, or all (status=all), a page at a time.
type ClaimsView struct {
	Branches []library.Branch
	Branch   string
	All      bool
	Page     int
	More     bool
	Claims   []circulation.ClaimedLoan
}

// claimsPageSize is how many claims a page of the list shows.
const claimsPageSize = 200

// PageURL is the list's address for page n, with the same filters.
func (v ClaimsView) PageURL(n int) string {
	q := url.Values{}
	if v.Branch != "" {
		q.Set("branch", v.Branch)
	}
	if v.All {
		q.Set("status", "all")
	}
	if n > 1 {
		q.Set("page", strconv.Itoa(n))
	}
	if len(q) == 0 {
		return "/claims-returned"
	}
	return "/claims-returned?" + q.Encode()
}

// handleClaimsReturned lists the loans patrons claim to have returned, oldest
// claim first, filtered by the branch that issued them and by status (open, or
// all with the closed ones), claimsPageSize a page.
func (s *Server) handleClaimsReturned(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	q := r.URL.Query()
	v := ClaimsView{Branch: q.Get("branch"), All: q.Get("status") == "all", Page: 1}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 100000 {
			s.Error(w, r, stacks.Errorf(stacks.EINVALID, "The page is a number from 1; go back to the first page."))
			return
		}
		v.Page = n
	}
	c, err := s.patrons.claims.ClaimsReturned(r.Context(), v.Branch, circulation.ClaimsFilter{All: v.All,
		Limit: claimsPageSize, Offset: (v.Page - 1) * claimsPageSize})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v.Branches, v.Claims, v.More = c.Branches, c.Claims, c.More
	s.Render(w, r, http.StatusOK, ClaimsReturnedPage(s.page(r, "Claims returned", "patrons"), v, prefs.Location))
}

// sortedKeys lists a form's error keys in order, for the error summary.
func sortedKeys(e FormErrors) []string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// errorFieldID is the id of the control an error key of the patron page is
// about: the key itself, but the Notices form's controls are named without
// their form ("notices_notice_overdue" is about "notice_overdue").
func errorFieldID(key string) string {
	if f, ok := strings.CutPrefix(key, "notices_"); ok {
		return f
	}
	return key
}

// errorSummaryTitle heads the patron page's error summary: what was not done.
func errorSummaryTitle(v PatronView) string {
	switch v.FailedForm {
	case "pay":
		return "The payment was not recorded"
	case "waive":
		return "Nothing was waived"
	case "refund":
		return "The refund was not recorded"
	case "charge":
		return "The charge was not added"
	}
	return "Not saved"
}
