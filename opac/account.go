package opac

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

func timesText(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}

func holdURL(id int64, action string) string {
	return "/account/holds/" + strconv.FormatInt(id, 10) + "/" + action
}

// holdText says where a hold is, as a patron reads it.
func holdText(p *Page, h holds.Hold, today string) string {
	switch h.Status {
	case holds.StatusWaiting:
		return "Ready for you at " + h.PickupBranchName + " until " + p.Day(h.PickupBy) + "."
	case holds.StatusInTransit:
		return "On its way to " + h.PickupBranchName + " for you."
	}
	text := fmt.Sprintf("Number %d in the queue, to pick up at %s.", h.Priority, h.PickupBranchName)
	if h.Suspended(today) {
		until, err := time.Parse(db.DayFormat, h.SuspendedUntil)
		if err == nil {
			text += " Paused until " + until.Format("Monday 2 January 2006") + "."
		}
	}
	return text
}

// problem says why the patron cannot borrow, renew or place holds, worded for
// them: an expired card or a block (the staff's note is for staff, not shown).
func problem(p *patrons.Patron, now time.Time, loc *time.Location) string {
	switch {
	case p.Blocked:
		return "Your account is blocked, so you cannot renew or place holds online. Please ask at the desk."
	case p.Expired(now.In(loc)):
		return "Your card expired on " + p.ExpiresOn.Format("2 January 2006") + ". Please renew it at the desk; until then you cannot renew or place holds online."
	}
	return ""
}

func branchChoices(bs []library.Branch) []branchChoice {
	out := make([]branchChoice, len(bs))
	for i, b := range bs {
		out[i] = branchChoice{Code: b.Code, Name: b.Name}
	}
	return out
}

// handleAccount shows My account: loans, holds, the balance, in one read.
func (s *Server) handleAccount(w http.ResponseWriter, r *http.Request) {
	me := patronFrom(r.Context())
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	a, err := s.my.account.Account(r.Context(), me.ID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := &AccountView{
		Today:        a.Now.In(prefs.Location).Format(db.DayFormat),
		Problem:      problem(me, a.Now, prefs.Location),
		KeepHistory:  me.KeepHistory,
		Holds:        a.Holds,
		BalanceCents: a.BalanceCents,
		Branches:     branchChoices(a.Branches),
	}
	for _, l := range a.Loans {
		v.Loans = append(v.Loans, LoanRow{ID: l.ID, RecordID: l.RecordID, Title: l.Title, Author: l.Author,
			Due: l.DueAt.In(prefs.Location).Format("Monday 2 January 2006"), Overdue: l.Overdue(a.Now), Renewals: l.Renewals})
	}
	s.Render(w, r, http.StatusOK, AccountPage(s.page(r, "My account", "account"), v))
}

// renewMessage words a renewal's outcome for the patron.
func renewMessage(r circulation.RenewResult, loc *time.Location) (kind, text string) {
	due := r.Loan.DueAt.In(loc).Format("Monday 2 January 2006")
	title := r.Loan.Title
	if r.OK {
		text = title + " is renewed: it is now due back on " + due + "."
		if r.FineCents > 0 {
			text += " A fine of " + stacks.FormatMoney(r.FineCents) + " was added for the days it was late."
		}
		return "ok", text
	}
	switch r.Refusal {
	case circulation.RenewBlocked:
		return "warn", title + " could not be renewed: your account is blocked. Please ask at the desk."
	case circulation.RenewCardExpired:
		return "warn", title + " could not be renewed: your card has expired. Please renew your card at the desk."
	case circulation.RenewTooMany:
		return "warn", fmt.Sprintf("%s could not be renewed: it has been renewed as many times as allowed. Please bring it back by %s.", title, due)
	case circulation.RenewOnHold:
		return "warn", fmt.Sprintf("%s could not be renewed: another reader is waiting for it. Please bring it back by %s.", title, due)
	case circulation.RenewNotMoved:
		return "warn", fmt.Sprintf("%s could not be renewed today: it is already due back on %s, and renewing now would not give you more time. Please try again nearer that date.", title, due)
	}
	return "warn", r.Message
}

// handleRenew renews one loan ("loan") or all ("all") with the desk's rules
// (circulation.Service.Renew), then shows My account with the outcome of each.
func (s *Server) handleRenew(w http.ResponseWriter, r *http.Request) {
	me := patronFrom(r.Context())
	req := circulation.RenewRequest{Actor: actor(me), PatronID: me.ID, All: r.PostForm.Get("all") != ""}
	if !req.All {
		for _, v := range r.PostForm["loan"] {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id <= 0 {
				s.Error(w, r, errNotYourLoan)
				return
			}
			req.LoanIDs = append(req.LoanIDs, id)
		}
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	results, err := s.Circ.Renew(r.Context(), req)
	switch {
	case err == nil:
	case stacks.ErrorCode(err) == stacks.ECONFLICT && !req.All:
		// A loan id that is not one of this patron's current loans: another
		// patron's, returned, or made up. Nothing was renewed.
		s.Error(w, r, errNotYourLoan)
		return
	case stacks.ErrorCode(err) == stacks.EINVALID:
		s.Flash(r, "warn", "Choose a loan to renew.")
		redirect(w, r, "/account", http.StatusSeeOther)
		return
	default:
		s.Error(w, r, err)
		return
	}
	if len(results) == 0 {
		s.Flash(r, "info", "You have nothing on loan to renew.")
	}
	for _, res := range results {
		kind, text := renewMessage(res, prefs.Location)
		s.Flash(r, kind, text)
	}
	redirect(w, r, "/account", http.StatusSeeOther)
}

var errNotYourLoan = stacks.Errorf(stacks.ENOTFOUND, "That loan is not on your account. Go back to My account to see your loans.")

// handleFines lists the ledger, newest first (view only).
func (s *Server) handleFines(w http.ResponseWriter, r *http.Request) {
	me := patronFrom(r.Context())
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	entries, err := s.my.patrons.Statement(r.Context(), me.ID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := &FinesView{}
	for _, e := range entries {
		v.BalanceCents += e.AmountCents
		v.Entries = append(v.Entries, FineRow{Date: e.CreatedAt.In(prefs.Location).Format("2 Jan 2006"),
			What: ledgerKind(e.Kind), Description: e.Description, Amount: stacks.FormatMoney(e.AmountCents)})
	}
	s.Render(w, r, http.StatusOK, FinesPage(s.page(r, "Fines and payments", "account"), v))
}

func ledgerKind(kind string) string {
	switch kind {
	case patrons.KindOverdue:
		return "Overdue fine"
	case patrons.KindLost:
		return "Lost item"
	case patrons.KindFee:
		return "Fee"
	case patrons.KindPayment:
		return "Payment"
	case patrons.KindWaiver:
		return "Written off"
	case patrons.KindProcessing:
		return "Processing fee"
	case patrons.KindManual:
		return "Charge"
	case patrons.KindVoid:
		return "Cancelled"
	case patrons.KindCredit:
		return "Credit"
	case patrons.KindRefund:
		return "Refund"
	}
	return kind
}

func (s *Server) handlePINForm(w http.ResponseWriter, r *http.Request) {
	s.Render(w, r, http.StatusOK, PINPage(s.page(r, "Change your PIN", "account"), PINForm{Errors: FormErrors{}}))
}

// handlePINChange checks the current PIN (throttled as a sign-in), then hashes
// the new one on the bounded pool, outside any transaction, stores it, and signs the patron out of every
// other session.
func (s *Server) handlePINChange(w http.ResponseWriter, r *http.Request) {
	me := patronFrom(r.Context())
	f := PINForm{Errors: FormErrors{}}
	current, pin, confirm := r.PostForm.Get("current"), r.PostForm.Get("new"), r.PostForm.Get("confirm")
	fail := func(err error) {
		field := stacks.ErrorField(err)
		if field == "" || stacks.ErrorCode(err) == stacks.ETOOMANY {
			field = "current"
		}
		if field == "pin" {
			field = "new"
		}
		f.Errors[field] = stacks.ErrorMessage(err)
		s.Render(w, r, kit.CodeStatus(stacks.ErrorCode(err)), PINPage(s.page(r, "Change your PIN", "account"), f))
	}
	switch {
	case current == "":
		fail(stacks.FieldErrorf("current", stacks.EINVALID, "Type your current PIN."))
		return
	case pin != confirm:
		fail(stacks.FieldErrorf("confirm", stacks.EINVALID, "The two new PINs are not the same. Type the new PIN twice."))
		return
	case pin == current:
		fail(stacks.FieldErrorf("new", stacks.EINVALID, "The new PIN is the same as the current one. Choose another."))
		return
	}
	if err := patrons.ValidatePIN(pin); err != nil {
		fail(err)
		return
	}
	// The current PIN first (counted and throttled), and only then the slow hash
	// of the new one, on the bounded pool: a stolen session or a script cannot
	// make the server hash PINs by the thousand.
	if err := s.SignIn.CheckCurrentPIN(r.Context(), me.ID, current, s.clientAddr(r)); err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		fail(err)
		return
	}
	hash, err := patrons.HashPINOnPool(r.Context(), pin)
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		fail(err)
		return
	}
	gen, err := s.my.patrons.ChangePIN(r.Context(), actor(me), me.ID, hash, sessions)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	// The session was deleted with the others: start a new one for this browser.
	if err := s.Sessions.RenewToken(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Sessions.Put(r.Context(), sessPatronID, me.ID)
	s.Sessions.Put(r.Context(), sessPINGen, gen)
	s.Sessions.Put(r.Context(), sessSeen, s.DB.Now().Unix())
	s.Flash(r, "ok", "Your PIN is changed. Use the new PIN here and at the self-check machines.")
	redirect(w, r, "/account", http.StatusSeeOther)
}

// findMyHold returns the hold id of the URL if it is the signed-in patron's;
// anyone else's hold, or none, is the same 404.
func (s *Server) findMyHold(r *http.Request) (holds.Hold, error) {
	me := patronFrom(r.Context())
	id, err := pathID(r, "hold")
	if err != nil {
		return holds.Hold{}, errNotYourHold
	}
	h, err := s.my.holds.Hold(r.Context(), id)
	if stacks.ErrorCode(err) == stacks.ENOTFOUND || (err == nil && h.PatronID != me.ID) {
		return holds.Hold{}, errNotYourHold
	}
	if err == nil && h.Status != holds.StatusQueued && h.Status != holds.StatusInTransit && h.Status != holds.StatusWaiting {
		return holds.Hold{}, stacks.Errorf(stacks.ECONFLICT, "Your hold on %s is no longer open.", h.Title)
	}
	return h, err
}

var errNotYourHold = stacks.Errorf(stacks.ENOTFOUND, "That hold is not on your account. Go back to My account to see your holds.")

// holdDone flashes the outcome of a hold action and goes back to My account;
// a refusal the patron can act on is flashed too, anything else is an error
// page.
func (s *Server) holdDone(w http.ResponseWriter, r *http.Request, h holds.Hold, err error, ok string) {
	var own *patronError
	switch {
	case err == nil:
		s.Flash(r, "ok", ok)
	case errors.As(err, &own):
		s.Flash(r, "warn", own.msg)
	case stacks.ErrorCode(err) == stacks.EINVALID && stacks.ErrorField(err) == "pickup":
		s.Flash(r, "warn", "Choose the library where you will pick up "+h.Title+" from the list.")
	case stacks.ErrorCode(err) == stacks.EINVALID:
		s.Flash(r, "warn", "Your hold on "+h.Title+" could not be changed: "+stacks.ErrorMessage(err))
	case stacks.ErrorCode(err) == stacks.ECONFLICT:
		// The desk's conflicts name hold ids ("Hold 12 is no longer open."):
		// the patron knows the hold by its title.
		s.Flash(r, "warn", "Your hold on "+h.Title+" could not be changed: it was filled, moved or cancelled meanwhile. My account shows it as it is now.")
	default:
		s.Error(w, r, err)
		return
	}
	redirect(w, r, "/account", http.StatusSeeOther)
}

// holdCancelConfirm is the value of the confirm field that the question's "Yes,
// cancel the hold" sends.
const holdCancelConfirm = "yes"

// handleHoldCancel cancels a hold once the patron has said yes: My account's
// "Cancel hold" link (a GET), and a post without confirm=yes (a page from before,
// a resent form), show the question (HoldCancelPage); only its "Yes, cancel the
// hold", a post with confirm=yes under the site's cross-origin protection,
// cancels. "Keep the hold" is a link back to My account.
func (s *Server) handleHoldCancel(w http.ResponseWriter, r *http.Request) {
	h, err := s.findMyHold(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if r.Method != http.MethodPost || r.PostForm.Get("confirm") != holdCancelConfirm {
		s.Render(w, r, http.StatusOK, HoldCancelPage(s.page(r, "Cancel your hold?", "account"), h))
		return
	}
	_, err = s.Circ.CancelHold(r.Context(), actor(patronFrom(r.Context())), h.ID, "cancelled by the patron online")
	s.holdDone(w, r, h, err, "Your hold on "+h.Title+" is cancelled.")
}

// holdCancelText says what cancelling the hold gives up.
func holdCancelText(p *Page, h holds.Hold) string {
	switch h.Status {
	case holds.StatusWaiting:
		return "A copy is set aside for you at " + h.PickupBranchName + " until " + p.Day(h.PickupBy) +
			". If you cancel, it goes to the next person waiting for it, or back on the shelf."
	case holds.StatusInTransit:
		return "A copy is on its way to " + h.PickupBranchName + " for you. If you cancel, it goes to the next person waiting for it, or back on the shelf."
	}
	return fmt.Sprintf("You are number %d in the queue. If you cancel and place a hold again later, you join the end of the queue.", h.Priority)
}

func (s *Server) handleHoldSuspend(w http.ResponseWriter, r *http.Request) {
	h, err := s.findMyHold(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if h.Status != holds.StatusQueued {
		s.holdDone(w, r, h, errTrapped(h), "")
		return
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	until := strings.TrimSpace(r.PostForm.Get("until"))
	err = s.my.account.PauseHold(r.Context(), actor(patronFrom(r.Context())), h.ID, until, prefs.Location)
	if stacks.ErrorField(err) == "until" {
		err = &patronError{fmt.Sprintf("To pause your hold on %s, choose the day it should start again: a day after today.", h.Title)}
	}
	day, _ := time.Parse(db.DayFormat, until)
	s.holdDone(w, r, h, err, "Your hold on "+h.Title+" is paused until "+day.Format("Monday 2 January 2006")+". Your place in the queue is kept.")
}

func (s *Server) handleHoldResume(w http.ResponseWriter, r *http.Request) {
	h, err := s.findMyHold(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if h.Status != holds.StatusQueued {
		s.holdDone(w, r, h, errTrapped(h), "")
		return
	}
	err = s.my.account.ResumeHold(r.Context(), actor(patronFrom(r.Context())), h.ID)
	s.holdDone(w, r, h, err, "Your hold on "+h.Title+" is active again.")
}

func (s *Server) handleHoldPickup(w http.ResponseWriter, r *http.Request) {
	h, err := s.findMyHold(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if h.Status != holds.StatusQueued {
		s.holdDone(w, r, h, errTrapped(h), "")
		return
	}
	name, err := s.my.account.ChangePickup(r.Context(), actor(patronFrom(r.Context())), h.ID, r.PostForm.Get("pickup"))
	s.holdDone(w, r, h, err, "You will pick up "+h.Title+" at "+name+".")
}

// patronError is a refusal already worded for the patron: holdDone shows it
// as it is.
type patronError struct{ msg string }

func (e *patronError) Error() string { return e.msg }

// errTrapped refuses a change to a hold whose copy is already set aside.
func errTrapped(h holds.Hold) error {
	return &patronError{fmt.Sprintf("A copy of %s is already set aside for you at %s, so this hold can no longer be changed. You can still cancel it.",
		h.Title, h.PickupBranchName)}
}

// loadHoldForm reads the record and the branches for the hold form.
func (s *Server) loadHoldForm(r *http.Request, f *PlaceHoldForm) error {
	id, err := pathID(r, "record")
	if err != nil {
		return err
	}
	hf, err := s.my.account.HoldForm(r.Context(), id)
	if err != nil {
		return err
	}
	f.RecordID, f.Title, f.Author, f.Branches = id, hf.Title, hf.Author, branchChoices(hf.Branches)
	return nil
}

func (s *Server) handlePlaceHoldForm(w http.ResponseWriter, r *http.Request) {
	f := &PlaceHoldForm{Pickup: patronFrom(r.Context()).HomeBranchCode}
	if err := s.loadHoldForm(r, f); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, PlaceHoldPage(s.page(r, "Place a hold", "search"), f))
}

// handlePlaceHold places a record-level hold for the signed-in patron with the
// desk's rules (holds.Place), worded for the patron.
func (s *Server) handlePlaceHold(w http.ResponseWriter, r *http.Request) {
	me := patronFrom(r.Context())
	f := &PlaceHoldForm{Pickup: r.PostForm.Get("pickup")}
	if err := s.loadHoldForm(r, f); err != nil {
		s.Error(w, r, err)
		return
	}
	refuse := func(status int, msg string) {
		f.Error = msg
		s.Render(w, r, status, PlaceHoldPage(s.page(r, "Place a hold", "search"), f))
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if msg := problem(me, s.DB.Now(), prefs.Location); msg != "" {
		refuse(http.StatusConflict, msg)
		return
	}
	placed, err := s.Circ.PlaceHold(r.Context(), holds.PlaceRequest{Actor: actor(me), RecordID: f.RecordID, PatronID: me.ID, PickupBranchCode: f.Pickup})
	var warn *holds.WarningError
	var refusal *holds.RefusalError
	switch {
	case err == nil:
		s.Flash(r, "ok", fmt.Sprintf("Hold placed: %s, to pick up at %s. You are number %d in the queue.", placed.Title, placed.PickupBranchName, placed.Position))
		redirect(w, r, "/account", http.StatusSeeOther)
	case errors.As(err, &warn):
		msg := "You already have a hold on this title."
		for _, wn := range warn.Warnings {
			if wn.Code == holds.WarnHasCopy && len(warn.Warnings) == 1 {
				msg = "You have a copy of this title on loan already."
			}
		}
		refuse(http.StatusConflict, msg)
	case stacks.ErrorField(err) == "pickup":
		refuse(http.StatusUnprocessableEntity, "Choose the library where you will pick it up.")
	case errors.As(err, &refusal):
		// The desk's wording names staff pages and notes: each reason in the
		// patron's words.
		switch refusal.Reason {
		case holds.RefusedHoldLimit:
			refuse(http.StatusConflict, "You have as many holds as your card allows. Cancel one you no longer need, then try again.")
		case holds.RefusedBlocked, holds.RefusedCardExpired:
			p := *me
			if refusal.Reason == holds.RefusedBlocked {
				p.Blocked = true
			}
			msg := problem(&p, s.DB.Now(), prefs.Location)
			if msg == "" {
				msg = "Your card cannot be used to place holds just now. Please ask at the desk."
			}
			refuse(http.StatusConflict, msg)
		default:
			refuse(http.StatusConflict, "This title cannot be placed on hold: none of its copies is for loan. You can read it in the library.")
		}
	case stacks.ErrorCode(err) == stacks.EINVALID || stacks.ErrorCode(err) == stacks.ECONFLICT:
		refuse(kit.CodeStatus(stacks.ErrorCode(err)), "This hold could not be placed. Please try again, or ask at the desk.")
	default:
		s.Error(w, r, err)
	}
}

// handleHistorySave stores the patron's choice to keep their loan history, or
// not (patrons.SetKeepHistory, audited as opac:<card>).
func (s *Server) handleHistorySave(w http.ResponseWriter, r *http.Request) {
	me := patronFrom(r.Context())
	keep := r.PostFormValue("keep_history") == "1"
	err := s.my.patrons.KeepHistory(r.Context(), actor(me), me.ID, keep)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if keep {
		s.Flash(r, "ok", "The library will keep the list of what you borrow.")
	} else {
		s.Flash(r, "ok", "The library will forget who borrowed an item some time after its return.")
	}
	redirect(w, r, "/account", http.StatusSeeOther)
}
