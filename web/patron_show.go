package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// PatronView is the patron page's view model. The page shows, in order: the block
// and expiry warnings, the facts, the notes, Loans and Holds (if set), the fines
// ledger with its forms, and the block form.
type PatronView struct {
	Patron   *patrons.Patron
	Standing patrons.StandingSummary
	// Ledger is the fines ledger, newest first.
	Ledger []patrons.LedgerEntry
	// Location is the library's time zone; Now the page's time in it.
	Location *time.Location
	Now      time.Time

	// The values of the page's forms: defaults, or what was typed into a form the
	// server refused. Errors holds its message, keyed "pay_amount", "pay_note",
	// "waive_amount", "waive_reason", "block_note", "unblock_note" or "pin_pin".
	PayAmount string
	PayNote   string
	PayMethod string
	// PayLines are the open charges ticked in a refused payment form.
	PayLines     map[int64]bool
	RefundAmount string
	ChargeType   string
	ChargeAmount string
	ChargeNote   string

	// Open are the charges still owed on, oldest first, for paying chosen lines.
	Open []patrons.OpenCharge
	// ChargeTypes are the configured manual charges.
	ChargeTypes []patrons.ChargeType
	WaiveAmount string
	WaiveReason string
	// WaiveLines are the open charges ticked in a refused waiver form.
	WaiveLines map[int64]bool
	BlockNote  string
	Errors     FormErrors
	// Refused is a refusal that is about no field (no permission), shown at the
	// top of the page with the field errors.
	Refused string
	// FailedForm names the refused form ("pay", "waive", ...), for the summary's
	// heading.
	FailedForm string
	// CanForgive is whether the signed-in staff member may refund (administrators):
	// the form is shown only then.
	CanForgive bool
	// CanWaive is whether the signed-in staff member may waive (administrators,
	// and staff with the waive permission): the form is shown only then.
	CanWaive bool

	// Loans and Holds are the sections circulation adds to the page, rendered after
	// the facts and before the ledger when set; patronView sets them from what
	// circulation.Service.PatronPage read in the page's one read transaction.
	Loans templ.Component
	Holds templ.Component
	// Notices is the Notices section: the patron's choices and latest notices.
	Notices *PatronNoticesView
}

// Expired reports whether the patron's card has run out today.
func (v *PatronView) Expired() bool { return v.Patron.Expired(v.Now) }

// renewCardDays is how close to its expiry a card is offered for renewal.
const renewCardDays = 30

// RenewDue reports whether to offer "Renew card": the card has expired or expires
// within renewCardDays.
func (v *PatronView) RenewDue() bool { return v.Patron.ExpiresWithin(v.Now, renewCardDays) }

// Owes reports whether the patron owes anything.
func (v *PatronView) Owes() bool { return v.Standing.BalanceCents > 0 }

// patronView builds the patron page from what circulation.Service.PatronPage
// read, in the library's time zone loc.
func patronView(pg circulation.PatronPage, loc *time.Location) PatronView {
	p := pg.Patron
	v := PatronView{Patron: p, Standing: pg.Standing, Ledger: pg.Ledger, Open: pg.Open, ChargeTypes: pg.ChargeTypes,
		Location: loc, Now: pg.Now.In(loc), Errors: FormErrors{}}
	if v.Owes() {
		v.PayAmount = formatMoney(v.Standing.BalanceCents)
	}
	if v.Standing.BalanceCents < 0 {
		v.RefundAmount = formatMoney(-v.Standing.BalanceCents)
	}
	v.Loans = patronLoansSection(p.ID, pg.Loans, loc, v.Now)
	v.Holds = patronHoldsView(p, pg.Holds, pg.Branches, loc, v.Now)
	v.Notices = patronNoticesView(p, pg.Notices, loc)
	return v
}

func (s *Server) handlePatronShow(w http.ResponseWriter, r *http.Request) {
	id, err := patronID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.showPatron(w, r, id, http.StatusOK, nil)
}

// showPatron renders the patron page with status; keep, if set, puts back what was
// typed into a refused form, and its message.
func (s *Server) showPatron(w http.ResponseWriter, r *http.Request, id int64, status int, keep func(*PatronView)) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	pg, err := s.patrons.page.PatronPage(r.Context(), id, patronNoticesShown)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := patronView(pg, prefs.Location)
	if u := userFrom(r.Context()); u != nil {
		v.CanForgive = u.IsAdmin()
		v.CanWaive = u.MayWaive()
	}
	if keep != nil {
		keep(&v)
	}
	s.Render(w, r, status, PatronPage(s.page(r, v.Patron.Name(), "patrons"), v))
}

// patronAction runs one of the patron page's forms: do makes the change (one
// service call) and returns the message to flash; then the browser goes back to the
// form's "return" path if it is a path on this site (the desk posts some of these
// forms from Check out), else to the patron page. If do refuses the input (an error about a field), the page is shown
// again with status 422, the message beside the field of form (the key is form +
// "_" + field) and the typed values that keep puts back.
func (s *Server) patronAction(w http.ResponseWriter, r *http.Request, form string, keep func(*PatronView),
	do func(actor stacks.Actor, id int64) (string, error)) {
	id, err := patronID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	msg, err := do(userFrom(r.Context()).Actor(), id)
	if field := stacks.ErrorField(err); err != nil && field != "" && stacks.ErrorCode(err) != stacks.EINTERNAL {
		s.showPatron(w, r, id, http.StatusUnprocessableEntity, func(v *PatronView) {
			if keep != nil {
				keep(v)
			}
			v.Errors[form+"_"+field] = stacks.ErrorMessage(err)
			v.FailedForm = form
			if v.Notices != nil {
				v.Notices.Errors = v.Errors
			}
		})
		return
	} else if stacks.ErrorCode(err) == stacks.EFORBIDDEN {
		// Not allowed (to waive): the page again, the refusal at its top.
		s.showPatron(w, r, id, http.StatusForbidden, func(v *PatronView) {
			if keep != nil {
				keep(v)
			}
			v.Refused, v.FailedForm = stacks.ErrorMessage(err), form
		})
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, safeReturn(r, patronURL(id)), http.StatusSeeOther)
}

// owedAfter describes the balance after a payment or waiver, for the flash.
func owedAfter(balance int64) string {
	if balance <= 0 {
		return "Nothing is owed now."
	}
	return formatMoney(balance) + " is still owed."
}

// handlePatronPay takes a payment by a method, for the ticked lines (none: the
// oldest first), and offers its receipt.
func (s *Server) handlePatronPay(w http.ResponseWriter, r *http.Request) {
	amount, note, method := r.PostFormValue("amount"), r.PostFormValue("note"), r.PostFormValue("method")
	lines, linesOK := formIDs(r, "line")
	ticked := map[int64]bool{}
	for _, id := range lines {
		ticked[id] = true
	}
	keep := func(v *PatronView) { v.PayAmount, v.PayNote, v.PayMethod, v.PayLines = amount, note, method, ticked }
	s.patronAction(w, r, "pay", keep, func(actor stacks.Actor, id int64) (string, error) {
		cents, ok := parseMoney(amount)
		if !ok {
			return "", stacks.FieldErrorf("amount", stacks.EINVALID, "Enter the amount paid, like 5.00.")
		}
		if !linesOK {
			return "", stacks.FieldErrorf("amount", stacks.EINVALID, "Tick the lines to pay again; the form sent a line that is not one.")
		}
		pid, bal, err := s.patrons.actions.Pay(r.Context(), actor, patrons.PayRequest{PatronID: id, Cents: cents, Method: method, ChargeIDs: lines, Note: note})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Payment of %s recorded. %s Receipt %d (%s).", formatMoney(cents), owedAfter(bal), pid, methodLabel(method)), nil
	})
}

// handlePatronRefund hands back a patron's credit by a method.
func (s *Server) handlePatronRefund(w http.ResponseWriter, r *http.Request) {
	amount, method := r.PostFormValue("amount"), r.PostFormValue("method")
	keep := func(v *PatronView) { v.RefundAmount = amount }
	s.patronAction(w, r, "refund", keep, func(actor stacks.Actor, id int64) (string, error) {
		cents, ok := parseMoney(amount)
		if !ok {
			return "", stacks.FieldErrorf("amount", stacks.EINVALID, "Enter the amount to refund, like 5.00.")
		}
		rid, err := s.patrons.actions.Refund(r.Context(), actor, id, cents, method, r.PostFormValue("note"))
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Refund of %s recorded. Receipt %d (%s).", formatMoney(cents), rid, methodLabel(method)), nil
	})
}

// handlePatronCharge adds a manual charge of a configured type.
func (s *Server) handlePatronCharge(w http.ResponseWriter, r *http.Request) {
	code, amount, note := r.PostFormValue("type"), r.PostFormValue("amount"), r.PostFormValue("note")
	keep := func(v *PatronView) { v.ChargeType, v.ChargeAmount, v.ChargeNote = code, amount, note }
	s.patronAction(w, r, "charge", keep, func(actor stacks.Actor, id int64) (string, error) {
		var cents int64
		if amount != "" {
			var ok bool
			if cents, ok = parseMoney(amount); !ok || cents <= 0 {
				return "", stacks.FieldErrorf("amount", stacks.EINVALID, "Enter the amount, like 2.00, or leave it empty for the type's default.")
			}
		}
		bal, err := s.patrons.actions.Charge(r.Context(), actor, id, code, cents, note)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Charge added; %s is owed now.", formatMoney(bal)), nil
	})
}

// handlePatronWaive forgives the ticked lines (all they owe, or the amount typed,
// the lines in order), for staff allowed to waive.
func (s *Server) handlePatronWaive(w http.ResponseWriter, r *http.Request) {
	amount, reason := r.PostFormValue("amount"), r.PostFormValue("reason")
	lines, linesOK := formIDs(r, "line")
	ticked := map[int64]bool{}
	for _, id := range lines {
		ticked[id] = true
	}
	keep := func(v *PatronView) { v.WaiveAmount, v.WaiveReason, v.WaiveLines = amount, reason, ticked }
	s.patronAction(w, r, "waive", keep, func(actor stacks.Actor, id int64) (string, error) {
		var cents int64
		if strings.TrimSpace(amount) != "" {
			var ok bool
			if cents, ok = parseMoney(amount); !ok || cents <= 0 {
				return "", stacks.FieldErrorf("amount", stacks.EINVALID, "Enter the amount to waive, like 2.50, or leave it empty to waive all the ticked lines owe.")
			}
		}
		if !linesOK {
			return "", stacks.FieldErrorf("lines", stacks.EINVALID, "Tick the lines to waive again; the form sent a line that is not one.")
		}
		req := patrons.WaiveRequest{PatronID: id, ChargeIDs: lines, Cents: cents, Reason: reason}
		waived, bal, err := s.patrons.actions.Waive(r.Context(), actor, req)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Waived %s. %s", formatMoney(waived), owedAfter(bal)), nil
	})
}

func (s *Server) handlePatronBlock(w http.ResponseWriter, r *http.Request) {
	note := r.PostFormValue("note")
	keep := func(v *PatronView) { v.BlockNote = note }
	s.patronAction(w, r, "block", keep, func(actor stacks.Actor, id int64) (string, error) {
		return "The patron is blocked: the desk will refuse checkouts and show your note.", s.patrons.actions.Block(r.Context(), actor, id, true, note)
	})
}

// handlePatronPIN sets the PIN the patron types at self-check machines. The PIN
// is hashed before the service's write transaction (bcrypt is slow on purpose).
func (s *Server) handlePatronPIN(w http.ResponseWriter, r *http.Request) {
	hash, hashErr := patrons.HashPIN(r.PostFormValue("pin"))
	s.patronAction(w, r, "pin", nil, func(actor stacks.Actor, id int64) (string, error) {
		if hashErr != nil {
			return "", hashErr
		}
		return "PIN set: the patron can use it at the self-check machines now.", s.patrons.actions.SetPIN(r.Context(), actor, id, hash)
	})
}

func (s *Server) handlePatronUnblock(w http.ResponseWriter, r *http.Request) {
	note := r.PostFormValue("note")
	s.patronAction(w, r, "unblock", nil, func(actor stacks.Actor, id int64) (string, error) {
		return "The block is removed.", s.patrons.actions.Block(r.Context(), actor, id, false, note)
	})
}

// handlePatronRenewCard renews the card on the spot, from the library's local
// date, and says until when it is valid now.
func (s *Server) handlePatronRenewCard(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.patronAction(w, r, "renew", nil, func(actor stacks.Actor, id int64) (string, error) {
		p, expires, err := s.Circ.RenewCard(r.Context(), actor, id, prefs.Location)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Card %s renewed: valid until %s.", p.Card, patronDay(expires)), nil
	})
}

// handlePatronDismissDeskMessage clears the message for the desk once staff have
// acted on it.
func (s *Server) handlePatronDismissDeskMessage(w http.ResponseWriter, r *http.Request) {
	s.patronAction(w, r, "desk_message", nil, func(actor stacks.Actor, id int64) (string, error) {
		return "The message for the desk is dismissed.", s.Circ.DismissDeskMessage(r.Context(), actor, id)
	})
}

// patronDay shows a card's expiry date. ExpiresOn is already a calendar date (held
// as midnight UTC), so it is not converted to the library's time zone.
func patronDay(t time.Time) string { return t.UTC().Format(db.DayFormat) }

// patronStatus is the short status of a patron in lists.
func patronStatus(p *patrons.Patron, now time.Time) string {
	switch {
	case p.Blocked:
		return "Blocked"
	case p.Expired(now):
		return "Card expired"
	}
	return "Active"
}

// ledgerKinds are the ledger's kinds as staff read them.
var ledgerKinds = map[string]string{
	patrons.KindOverdue:    "Overdue fine",
	patrons.KindLost:       "Lost item",
	patrons.KindFee:        "Fee",
	patrons.KindPayment:    "Payment",
	patrons.KindWaiver:     "Waiver",
	patrons.KindProcessing: "Processing fee",
	patrons.KindManual:     "Charge",
	patrons.KindVoid:       "Void",
	patrons.KindCredit:     "Credit",
	patrons.KindRefund:     "Refund",
}

func ledgerKind(kind string) string {
	if k, ok := ledgerKinds[kind]; ok {
		return k
	}
	return kind
}
