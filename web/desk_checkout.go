package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// circulationService is what the staff pages ask of circulation: each page's
// small interface, declared next to its handlers, and the lost-item, renewal and
// stocktake actions of the patron and stocktake pages.
type circulationService interface {
	deskService
	checkinService
	holdDeskService
	transferService
	historyService
	rulesService
	homeService
	recordPageService
	Renew(ctx context.Context, req circulation.RenewRequest) ([]circulation.RenewResult, error)
	PlaceHold(ctx context.Context, req holds.PlaceRequest) (holds.Placed, error)
	QuoteLost(ctx context.Context, patronID, loanID int64) (circulation.LostBill, error)
	DeclareLostAsQuoted(ctx context.Context, actor stacks.Actor, patronID, loanID, quotedCents int64) (circulation.LostBill, error)
	ClaimReturned(ctx context.Context, actor stacks.Actor, patronID, loanID int64) error
}

// deskService is what the Check out page asks of circulation.
type deskService interface {
	DeskPatron(ctx context.Context, patronID int64) (circulation.DeskPatron, error)
	IdentifyAtDesk(ctx context.Context, input string, limit int) (patrons.Identified, *catalog.Item, error)
	PatronByCard(ctx context.Context, card string) (*patrons.Patron, error)
	Checkout(ctx context.Context, req circulation.CheckoutRequest) (circulation.CheckoutResult, error)
	Renew(ctx context.Context, req circulation.RenewRequest) ([]circulation.RenewResult, error)
	RenewCard(ctx context.Context, actor stacks.Actor, patronID int64, loc *time.Location) (*patrons.Patron, time.Time, error)
	DismissDeskMessage(ctx context.Context, actor stacks.Actor, patronID int64) error
}

func (s *Server) handleCheckoutPage(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	visit, ok, ended := s.visit(r, prefs)
	v := &CheckoutView{Notice: ended}
	if err := s.loadCheckoutView(r, prefs, visit, ok, v); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, CheckoutPage(s.page(r, "Check out", "checkout"), v))
}

// loadCheckoutView fills the view for the visit, if any, in one read transaction:
// the patron with their standing, and their current loans split into this visit's
// and the others.
func (s *Server) loadCheckoutView(r *http.Request, prefs library.Preferences, visit deskVisit, open bool, v *CheckoutView) error {
	v.Loc, v.FinesLimit, v.IdleMinutes = prefs.Location, prefs.FinesLimitCents, prefs.DeskIdleMinutes
	v.Now = s.DB.Now()
	if !open {
		return nil
	}
	v.FinesConfirmed = visit.FinesConfirmed
	dp, err := s.Circ.DeskPatron(r.Context(), visit.PatronID)
	v.Patron, v.Standing = dp.Patron, dp.Standing
	if stacks.ErrorCode(err) == stacks.ENOTFOUND {
		s.Sessions.Remove(r.Context(), sessVisit)
		v.Patron = nil
		return nil
	} else if err != nil {
		return err
	}
	started := time.Unix(visit.Started, 0)
	v.Renewed = map[int64]bool{}
	for _, l := range dp.Loans {
		switch {
		case slices.Contains(visit.Renewed, l.ID):
			v.Renewed[l.ID] = true
			v.Visit = append(v.Visit, l)
		case !l.IssuedAt.Before(started):
			v.Visit = append(v.Visit, l)
		default:
			v.Others = append(v.Others, l)
		}
	}
	slices.SortFunc(v.Visit, func(a, b circulation.Loan) int { return newestFirst(a.IssuedAt, b.IssuedAt, a.ID, b.ID) })
	return nil
}

// checkoutReply answers a Check out action. For the desk script: the row and the
// regions of the page, as they are now. Without it: done is answered with a
// redirect to the page (post, redirect, get), anything else with the page itself
// showing the row.
func (s *Server) checkoutReply(w http.ResponseWriter, r *http.Request, prefs library.Preferences, status int, row ScanRow, done bool) {
	if !isDeskScript(r) && done {
		if row.Kind == rowDone && row.Loan != nil && !row.Renewed && row.Message != "" {
			// The page after the redirect lists the visit's loans, not this row:
			// what the checkout did beyond lending (a lost bill reversed) goes
			// in the flash.
			s.Flash(r, "info", row.Message)
		}
		redirect(w, r, "/checkout", http.StatusSeeOther)
		return
	}
	visit, open := s.Sessions.Get(r.Context(), sessVisit).(deskVisit)
	v := &CheckoutView{}
	if row.Kind == rowInfo && row.Message != "" && !isDeskScript(r) {
		v.Notice = row.Message
	}
	if err := s.loadCheckoutView(r, prefs, visit, open && visit.PatronID != 0, v); err != nil {
		s.Error(w, r, err)
		return
	}
	if row.Kind == rowInfo && row.NewVisit && v.needsAttention() {
		// A card scanned: its banners (an expired card, a block, fines, a message
		// for the desk) come with the question sound, before any item.
		row.Sound = soundQuestion
	}
	if isDeskScript(r) {
		s.Render(w, r, status, CheckoutFragment(v, row))
		return
	}
	if row.Kind != rowInfo {
		v.Row = &row
	}
	s.Render(w, r, status, CheckoutPage(s.page(r, "Check out", "checkout"), v))
}

// handleCheckoutScan takes one scan from the desk script: a patron's card when no
// visit is open, else an item's barcode, or another patron's card, which ends the
// visit and opens theirs. The server decides, by lookup, not by the look of the
// barcode.
func (s *Server) handleCheckoutScan(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	scanned := strings.TrimSpace(r.PostFormValue("scan"))
	visit, ok, ended := s.visit(r, prefs)
	if !ok {
		s.openPatron(w, r, prefs, scanned, ended)
		return
	}
	s.checkoutItem(w, r, prefs, visit, scanned, nil)
}

// handleCheckoutPatron opens a visit from the card form (a card number or a name).
func (s *Server) handleCheckoutPatron(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.openPatron(w, r, prefs, strings.TrimSpace(r.PostFormValue("card")), "")
}

// openPatron finds the patron for a card number or a name and opens their visit;
// several matching names are offered to choose from. ended, if set, says that the
// previous visit just ended for idleness: a refusal then clears its rows and says so.
func (s *Server) openPatron(w http.ResponseWriter, r *http.Request, prefs library.Preferences, input, ended string) {
	refuse := func(msg string) {
		heading := "No patron"
		if ended != "" {
			heading, msg = "Visit ended", ended+" "+msg
		}
		s.checkoutReply(w, r, prefs, http.StatusUnprocessableEntity,
			ScanRow{Kind: rowRefused, Scanned: input, Heading: heading, Message: msg, Sound: soundError, NewVisit: ended != ""}, false)
	}
	// Not a card: perhaps an item's barcode, scanned before the patron's card.
	id, item, err := s.Circ.IdentifyAtDesk(r.Context(), input, 50)
	switch {
	case err != nil && stacks.ErrorCode(err) == stacks.EINTERNAL:
		s.Error(w, r, err)
	case item != nil:
		refuse(fmt.Sprintf("Nothing was checked out: %s is an item's barcode (%s), not a patron's card. Scan the patron's card first, then the items.", item.Barcode, item.Title))
	case err != nil:
		refuse(stacks.ErrorMessage(err))
	case id.Patron != nil:
		s.startVisit(r, id.Patron.ID)
		row := ScanRow{Kind: rowInfo, Scanned: input, NewVisit: true, Message: "Now serving " + id.Patron.Name() + " (" + id.Patron.Card + ")."}
		s.checkoutReply(w, r, prefs, http.StatusOK, row, true)
	default:
		v := &CheckoutView{Card: input, Matches: id.Matches}
		if err := s.loadCheckoutView(r, prefs, deskVisit{}, false, v); err != nil {
			s.Error(w, r, err)
			return
		}
		if isDeskScript(r) {
			s.Render(w, r, http.StatusOK, CheckoutFragment(v, ScanRow{Kind: rowInfo, Scanned: input,
				Message: fmt.Sprintf("%d patrons match “%s”: choose one above.", len(id.Matches), input)}))
			return
		}
		s.Render(w, r, http.StatusOK, CheckoutPage(s.page(r, "Check out", "checkout"), v))
	}
}

// handleCheckoutItem checks out an item to the open visit's patron (the barcode
// form, and the decision's Confirm with the block codes in confirm).
func (s *Server) handleCheckoutItem(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	barcode := strings.TrimSpace(r.PostFormValue("barcode"))
	visit, ok, ended := s.visit(r, prefs)
	if !ok {
		msg := "No patron is open at this desk: scan the patron's card first. Nothing was checked out."
		if ended != "" {
			msg = ended + " Nothing was checked out: scan the patron's card, then the item again."
		}
		s.checkoutReply(w, r, prefs, http.StatusConflict, ScanRow{Kind: rowRefused, Scanned: barcode, NewVisit: ended != "",
			Sound: soundError, Heading: "No patron open", Message: msg}, false)
		return
	}
	s.checkoutItem(w, r, prefs, visit, barcode, r.PostForm["confirm"])
}

func (s *Server) checkoutItem(w http.ResponseWriter, r *http.Request, prefs library.Preferences, visit deskVisit, barcode string, confirm []string) {
	if visit.FinesConfirmed && !slices.Contains(confirm, circulation.BlockFines) {
		confirm = append(confirm, circulation.BlockFines)
	}
	u := userFrom(r.Context())
	res, err := s.Circ.Checkout(r.Context(), circulation.CheckoutRequest{
		Actor:    u.Actor(),
		PatronID: visit.PatronID,
		Barcode:  barcode,
		Confirm:  confirm,
	})
	var blocked *circulation.BlockedError
	var renewRefused *circulation.RenewRefusedError
	switch {
	case err == nil:
		changed := false
		if res.Renewed {
			s.cfg.Metrics.Circulation("renew", "desk")
			if !slices.Contains(visit.Renewed, res.Loan.ID) {
				visit.Renewed, changed = append(visit.Renewed, res.Loan.ID), true
			}
		} else {
			s.cfg.Metrics.Circulation("checkout", "desk")
		}
		if !visit.FinesConfirmed && slices.Contains(confirm, circulation.BlockFines) {
			visit.FinesConfirmed, changed = true, true
		}
		if changed {
			s.Sessions.Put(r.Context(), sessVisit, visit)
		}
		s.checkoutReply(w, r, prefs, http.StatusOK, ScanRow{Kind: rowDone, Scanned: res.Loan.Barcode, Loan: &res.Loan,
			Renewed: res.Renewed, FineCents: res.FineCents, Message: res.Message}, true)
	case errors.As(err, &blocked) && blocked.Has(circulation.BlockUnknownBarcode):
		s.switchPatron(w, r, prefs, visit, barcode)
	case errors.As(err, &renewRefused):
		s.checkoutReply(w, r, prefs, http.StatusUnprocessableEntity, renewRefusedRow(renewRefused.Result), false)
	case errors.As(err, &blocked) && blocked.Refused():
		// An expired card's way out (Renew card) is on its banner above.
		row := ScanRow{Kind: rowRefused, Scanned: barcode, Blocked: blocked, Sound: soundError}
		if blocked.Has(circulation.BlockPatronBlocked) {
			row.PatronID = visit.PatronID
		}
		s.checkoutReply(w, r, prefs, http.StatusUnprocessableEntity, row, false)
	case errors.As(err, &blocked):
		s.checkoutReply(w, r, prefs, http.StatusConflict, ScanRow{Kind: rowDecision, Scanned: barcode, Blocked: blocked, Sound: soundQuestion}, false)
	case stacks.ErrorCode(err) != stacks.EINTERNAL:
		s.checkoutReply(w, r, prefs, kit.CodeStatus(stacks.ErrorCode(err)), ScanRow{Kind: rowRefused, Scanned: barcode,
			Message: stacks.ErrorMessage(err), Sound: soundError}, false)
	default:
		s.Error(w, r, err)
	}
}

// switchPatron handles a Check out scan that is no item's barcode: another
// patron's card ends the visit and opens theirs; anything else is refused.
func (s *Server) switchPatron(w http.ResponseWriter, r *http.Request, prefs library.Preferences, visit deskVisit, scanned string) {
	p, err := s.Circ.PatronByCard(r.Context(), scanned)
	switch {
	case stacks.ErrorCode(err) == stacks.ENOTFOUND:
		s.checkoutReply(w, r, prefs, http.StatusUnprocessableEntity, ScanRow{Kind: rowRefused, Scanned: scanned, Sound: soundError,
			Message: fmt.Sprintf("No item or patron has barcode %s. Check the barcode, or look the item up in Search.", scanned)}, false)
	case err != nil:
		s.Error(w, r, err)
	case p.ID == visit.PatronID:
		s.checkoutReply(w, r, prefs, http.StatusOK, ScanRow{Kind: rowInfo, Scanned: scanned,
			Message: "That is " + p.Name() + "'s card: this visit is already theirs."}, true)
	default:
		s.startVisit(r, p.ID)
		row := ScanRow{Kind: rowInfo, Scanned: scanned, NewVisit: true, Message: "Patron card: now serving " + p.Name() + " (" + p.Card + "). The previous visit ended."}
		s.checkoutReply(w, r, prefs, http.StatusOK, row, true)
	}
}

// handleCheckoutCancel is a decision's Cancel: nothing is checked out.
func (s *Server) handleCheckoutCancel(w http.ResponseWriter, r *http.Request) {
	if !isDeskScript(r) {
		redirect(w, r, "/checkout", http.StatusSeeOther)
		return
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	barcode := strings.TrimSpace(r.PostFormValue("barcode"))
	s.checkoutReply(w, r, prefs, http.StatusOK, ScanRow{Kind: rowCancelled, Scanned: barcode,
		Message: "Not checked out: cancelled."}, false)
}

// visitAction runs a Check out action that needs the open visit (renew a loan,
// renew the card), answering a missing visit the same way for each.
func (s *Server) visitAction(w http.ResponseWriter, r *http.Request, what string, act func(prefs library.Preferences, visit deskVisit) (int, ScanRow, error)) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	visit, ok, ended := s.visit(r, prefs)
	if !ok {
		s.checkoutReply(w, r, prefs, http.StatusConflict, ScanRow{Kind: rowRefused, Scanned: what, NewVisit: ended != "", Sound: soundError,
			Heading: "No patron open", Message: strings.TrimSpace(ended + " No patron is open at this desk: scan the patron's card first.")}, false)
		return
	}
	status, row, err := act(prefs, visit)
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		status, row = kit.CodeStatus(stacks.ErrorCode(err)), ScanRow{Kind: rowRefused, Scanned: what, Message: stacks.ErrorMessage(err), Sound: soundError}
	}
	if !isDeskScript(r) && row.Kind != rowRefused {
		s.Flash(r, "ok", row.Message)
	}
	s.checkoutReply(w, r, prefs, status, row, row.Kind != rowRefused)
}

// renewRefusedRow is the row of a refused renewal: headed by its reason, with the
// override staff may give when the refusal allows one.
func renewRefusedRow(res circulation.RenewResult) ScanRow {
	row := ScanRow{Kind: rowRefused, Scanned: res.Loan.Barcode, Reason: renewReason(res.Refusal), Message: res.Message, Sound: soundError}
	if res.Overridable {
		row.OverrideLoan = res.Loan.ID
	}
	return row
}

// renewReason words why a renewal was refused, for the heading of its banner.
func renewReason(refusal string) string {
	switch refusal {
	case circulation.RenewOnHold:
		return "Another patron is waiting"
	case circulation.RenewTooMany:
		return "No renewals left"
	case circulation.RenewNotMoved:
		return "The due date would not move"
	case circulation.RenewCardExpired:
		return "Card expired"
	case circulation.RenewBlocked:
		return "Patron blocked"
	case circulation.RenewLost:
		return "Declared lost or claimed returned"
	}
	return "Not allowed"
}

// handleCheckoutRenew renews one of the open patron's other loans; with a reason
// (override), despite a refusal staff may override.
func (s *Server) handleCheckoutRenew(w http.ResponseWriter, r *http.Request) {
	s.visitAction(w, r, "Renew", func(prefs library.Preferences, visit deskVisit) (int, ScanRow, error) {
		id, err := strconv.ParseInt(r.PostFormValue("loan"), 10, 64)
		if err != nil || id <= 0 {
			return 0, ScanRow{}, stacks.Errorf(stacks.EINVALID, "That is not a loan of this patron; reload the page and try again.")
		}
		override, overriding := r.PostForm["override"]
		reason := strings.Join(override, " ")
		if overriding && strings.TrimSpace(reason) == "" {
			return 0, ScanRow{}, stacks.Errorf(stacks.EINVALID, "Nothing was renewed: say why it is renewed anyway (the reason is kept in the audit log), then choose Renew anyway again.")
		}
		results, err := s.Circ.Renew(r.Context(), circulation.RenewRequest{Actor: userFrom(r.Context()).Actor(), PatronID: visit.PatronID,
			LoanIDs: []int64{id}, Override: reason})
		if err != nil {
			return 0, ScanRow{}, err
		}
		if len(results) == 0 {
			return 0, ScanRow{}, stacks.Errorf(stacks.ENOTFOUND, "That loan is no longer on this patron's card; it may have been returned.")
		}
		res := results[0]
		if !res.OK {
			return http.StatusUnprocessableEntity, renewRefusedRow(res), nil
		}
		s.cfg.Metrics.Circulation("renew", "desk")
		if !slices.Contains(visit.Renewed, res.Loan.ID) {
			visit.Renewed = append(visit.Renewed, res.Loan.ID)
			s.Sessions.Put(r.Context(), sessVisit, visit)
		}
		msg := res.Message
		if res.FineCents > 0 {
			msg += " An overdue fine of " + formatMoney(res.FineCents) + " was charged."
		}
		return http.StatusOK, ScanRow{Kind: rowDone, Scanned: res.Loan.Barcode, Loan: &res.Loan, Renewed: true, Message: msg}, nil
	})
}

// handleCheckoutRenewCard renews the open patron's card: the way out of an
// expired-card refusal, on the spot.
func (s *Server) handleCheckoutRenewCard(w http.ResponseWriter, r *http.Request) {
	s.visitAction(w, r, "Renew card", func(prefs library.Preferences, visit deskVisit) (int, ScanRow, error) {
		p, until, err := s.Circ.RenewCard(r.Context(), userFrom(r.Context()).Actor(), visit.PatronID, prefs.Location)
		if err != nil {
			return 0, ScanRow{}, err
		}
		return http.StatusOK, ScanRow{Kind: rowInfo, Scanned: p.Card,
			Message: fmt.Sprintf("Card %s renewed: valid until %s. Scan the item again.", p.Card, patronDay(until))}, nil
	})
}

// handleCheckoutDismissMessage dismisses the message staff left on the open
// patron for the desk: staff read it to the patron, it is not shown again.
func (s *Server) handleCheckoutDismissMessage(w http.ResponseWriter, r *http.Request) {
	s.visitAction(w, r, "Dismiss message", func(prefs library.Preferences, visit deskVisit) (int, ScanRow, error) {
		if err := s.Circ.DismissDeskMessage(r.Context(), userFrom(r.Context()).Actor(), visit.PatronID); err != nil {
			return 0, ScanRow{}, err
		}
		return http.StatusOK, ScanRow{Kind: rowInfo, Scanned: "Message", Message: "The message for the desk is dismissed."}, nil
	})
}

// handleCheckoutDone ends the visit ("Finish with this patron", or the desk script
// when the desk has been idle). The answer names nobody: the next patron reads it.
func (s *Server) handleCheckoutDone(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Sessions.Remove(r.Context(), sessVisit)
	msg := "Finished. Scan the next patron's card."
	if r.PostFormValue("reason") == "idle" {
		msg = fmt.Sprintf("The visit ended after %d minutes without activity at the desk. Scan the next patron's card.", prefs.DeskIdleMinutes)
	}
	s.checkoutReply(w, r, prefs, http.StatusOK, ScanRow{Kind: rowInfo, Scanned: "Finish", NewVisit: true, Message: msg}, true)
}

func (s *Server) handleCheckoutSlip(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	visit, ok, _ := s.visit(r, prefs)
	if !ok {
		redirect(w, r, "/checkout", http.StatusSeeOther)
		return
	}
	v := &CheckoutView{}
	if err := s.loadCheckoutView(r, prefs, visit, true, v); err != nil {
		s.Error(w, r, err)
		return
	}
	if v.Patron == nil {
		redirect(w, r, "/checkout", http.StatusSeeOther)
		return
	}
	u := userFrom(r.Context())
	slip := &SlipView{Loc: prefs.Location, Now: s.DB.Now(), Library: prefs.LibraryName, Branch: u.BranchName,
		Patron: v.Patron, Loans: v.Visit, Renewed: v.Renewed}
	s.Render(w, r, http.StatusOK, DueSlipPage(s.page(r, "Due-date slip", "checkout"), slip))
}
