package sip

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// patronStatus answers 23 (patron status request) with 24. A wrong PIN gets the
// patron's status without their name or what they owe.
func (c *conn) patronStatus(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	v, err := c.findPatron(ctx, m, needStanding)
	if err != nil {
		c.internalError(ctx, "patron status", err)
	}
	c.patronStatusResponse(&v, err, prefs, now)
}

// patronStatusResponse writes 24, the answer to a patron status request (23) and
// to block patron (01); err is an error reading the patron, already logged.
func (c *conn) patronStatusResponse(v *patronView, err error, prefs library.Preferences, now time.Time) {
	r := &c.resp
	r.start("24")
	r.patronStatus(v, prefs, now)
	r.fixed(c.language())
	r.date(now, prefs.Location)
	r.field("AO", c.account.Institution)
	r.field("AA", v.card)
	c.patronIdentity(v)
	if err != nil {
		r.field("AF", msgTryAgain)
	} else {
		r.optional("AF", v.statusMessage(prefs, now))
	}
}

// patronIdentity appends the personal name (AE, required, empty for an unknown
// patron or a wrong PIN), valid patron (BL), valid PIN (CQ, when one was sent and
// could be checked), and
// what the patron owes (BH, BV) when authorized.
func (c *conn) patronIdentity(v *patronView) {
	c.patronName(v)
	if v.authorized() {
		c.resp.field("BH", c.s.cfg.Currency)
		c.resp.money("BV", v.standing.BalanceCents)
	}
}

// patronName appends AE, BL and CQ: the part of patronIdentity that patron
// enable's answer (26), which has no money fields, shares.
func (c *conn) patronName(v *patronView) {
	r := &c.resp
	name := ""
	if v.authorized() {
		name = v.p.Name()
	}
	r.field("AE", name)
	r.b = append(r.b, "BL"...)
	r.flag(v.p != nil)
	r.b = append(r.b, '|')
	if v.pinGiven && !v.pinBusy {
		// Omitted when the PIN could not be checked in time: N would tell the
		// terminal it is wrong (docs/sip.md, "PINs").
		r.b = append(r.b, "CQ"...)
		r.flag(v.pinOK)
		r.b = append(r.b, '|')
	}
}

// Summary positions of message 63: which list of items the terminal asks for.
const (
	summaryHoldItems = iota
	summaryOverdueItems
	summaryChargedItems
	summaryFineItems
	summaryRecallItems
	summaryUnavailableHolds
)

// defaultListLength is how many items a list has when the terminal gives no end
// item (BQ).
const defaultListLength = 50

// patronInformation answers 63 with 64: the patron's counts, and the lists the
// summary field asks for (one position set to Y: hold items AS, overdue items AT,
// charged items AU, fine items AV, recall items BU, unavailable holds CD), from
// item BP to item BQ (1-based; 50 items from BP by default).
func (c *conn) patronInformation(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	summary := m.fixedAt(21, 10)
	need := needStanding | needLoans | needHolds | needLedger
	if asks(summary, summaryHoldItems) || asks(summary, summaryUnavailableHolds) {
		need |= needHoldCopies
	}
	v, err := c.findPatron(ctx, m, need)
	if err != nil {
		c.internalError(ctx, "patron information", err)
	}

	var waiting, unavailable, overdue, charged, fines []string
	if v.authorized() {
		for _, h := range v.holds {
			if h.Status == holds.StatusWaiting {
				waiting = append(waiting, c.holdItem(&v, h))
			} else {
				unavailable = append(unavailable, c.holdItem(&v, h))
			}
		}
		for _, l := range v.loans {
			charged = append(charged, l.Barcode)
			if l.Overdue(now) {
				overdue = append(overdue, l.Barcode)
			}
		}
		fines = outstandingCharges(v.ledger, v.standing.BalanceCents)
	}

	r := &c.resp
	r.start("64")
	r.patronStatus(&v, prefs, now)
	r.fixed(c.language())
	r.date(now, prefs.Location)
	r.count(len(waiting), 4)
	r.count(len(overdue), 4)
	r.count(len(charged), 4)
	r.count(len(fines), 4)
	r.count(0, 4) // recall items: Stacks has no recalls
	r.count(len(unavailable), 4)
	r.field("AO", c.account.Institution)
	r.field("AA", v.card)
	c.patronIdentity(&v)
	if v.authorized() {
		if v.maxLoans >= 0 {
			r.b = append(r.b, "CB"...)
			r.count(v.maxLoans, 4)
			r.b = append(r.b, '|')
		}
		r.money("CC", prefs.FinesLimitCents)
		start, end := listRange(m)
		lists := []struct {
			id    string
			items []string
		}{
			summaryHoldItems:        {"AS", waiting},
			summaryOverdueItems:     {"AT", overdue},
			summaryChargedItems:     {"AU", charged},
			summaryFineItems:        {"AV", fines},
			summaryRecallItems:      {"BU", nil},
			summaryUnavailableHolds: {"CD", unavailable},
		}
		for i, l := range lists {
			if !asks(summary, i) {
				continue
			}
			for n := start; n <= end && n <= len(l.items); n++ {
				r.field(l.id, l.items[n-1])
			}
		}
		if v.pinOK || c.account.Settings.ContactWithoutPIN {
			r.optional("BD", strings.ReplaceAll(v.p.Address, "\n", ", "))
			r.optional("BE", v.p.Email)
			r.optional("BF", v.p.Phone)
		}
	}
	if err != nil {
		r.field("AF", msgTryAgain)
	} else {
		r.optional("AF", v.statusMessage(prefs, now))
	}
}

// asks reports whether the summary field of 63 asks for list i.
func asks(summary string, i int) bool {
	return i < len(summary) && (summary[i] == 'Y' || summary[i] == 'y')
}

// holdItem is how a hold is listed in 64 (AS, CD), by the account's HoldItems:
// its title, or an item barcode (the item set aside or in transit for it, the
// item of an item-level hold, one copy of the title), else its title when the
// title has no copy in circulation.
func (c *conn) holdItem(v *patronView, h holds.Hold) string {
	if c.account.Settings.HoldItems == HoldItemsTitle {
		return h.Title
	}
	switch {
	case h.TrappedBarcode != "":
		return h.TrappedBarcode
	case h.ItemBarcode != "":
		return h.ItemBarcode
	case v.copies[h.RecordID] != "":
		return v.copies[h.RecordID]
	}
	return h.Title
}

// listRange reads the start (BP) and end (BQ) item numbers of a list.
func listRange(m *Message) (start, end int) {
	start, end = 1, 0
	if n, err := strconv.Atoi(strings.TrimSpace(m.Get("BP"))); err == nil && n > 0 {
		start = n
	}
	end = start + defaultListLength - 1
	if n, err := strconv.Atoi(strings.TrimSpace(m.Get("BQ"))); err == nil && n > 0 {
		end = n
	}
	return start, end
}

// outstandingCharges lists the charges that make up what the patron owes, newest
// first, as "amount description": the ledger does not match payments to charges, so
// payments are taken to settle the oldest charges first.
func outstandingCharges(ledger []patrons.LedgerEntry, balance int64) []string {
	var out []string
	for _, e := range ledger {
		if balance <= 0 {
			break
		}
		if e.AmountCents <= 0 || !patrons.IsCharge(e.Kind) {
			continue
		}
		amount := min(e.AmountCents, balance)
		balance -= amount
		out = append(out, formatMoney(amount)+" "+e.Description)
	}
	return out
}

// sameCurrency reports whether the currency type of a fee paid (37) is the
// library's; blanks (not given) are taken to be.
func sameCurrency(sent, library string) bool {
	sent = strings.TrimSpace(sent)
	return sent == "" || strings.EqualFold(sent, library)
}

// feePaid answers 37 with 38: a payment at the terminal goes into the patron's
// ledger as a payment (patrons.PayLines, oldest lines first), which refuses more
// than the patron owes. Its method comes from the payment type (00 cash, 01 VISA
// and 02 credit card are card, anything else other) and its desk is the
// terminal's branch, so kiosk payments are in that branch's cash-up. The amount
// is taken in the library's currency (a payment in another currency type is
// refused); the fee identifier (CG) is not used.
func (c *conn) feePaid(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	v, err := c.findPatron(ctx, m, needStanding)
	accepted, message := false, ""
	cents, amountOK := parseMoney(strings.TrimSpace(m.Get("BV")))
	switch {
	case err != nil:
		c.internalError(ctx, "fee paid", err)
		message = msgTryAgain
	case v.p == nil:
		message = msgPatronNotFound
	case v.pinGiven && !v.pinOK:
		message = v.pinMessage()
	case !amountOK || cents <= 0:
		message = "The amount paid is not a valid amount."
	case !sameCurrency(m.fixedAt(22, 3), c.s.cfg.Currency):
		message = "This library takes payments in " + c.s.cfg.Currency + ", not " + m.fixedAt(22, 3) + ". Please see staff at the desk."
	case v.standing.BalanceCents <= 0:
		message = "You owe nothing, so there is nothing to pay."
	case cents > v.standing.BalanceCents:
		message = "You owe " + formatMoney(v.standing.BalanceCents) + "; you can pay at most that amount."
	default:
		kind, method := "payment type "+m.fixedAt(20, 2), patrons.MethodOther
		switch m.fixedAt(20, 2) {
		case "00":
			kind, method = "cash", patrons.MethodCash
		case "01":
			kind, method = "VISA", patrons.MethodCard
		case "02":
			kind, method = "credit card", patrons.MethodCard
		}
		note := "at self-check " + c.account.Username + ", " + kind
		if id := m.Get("BK"); id != "" {
			note += ", transaction " + id
		}
		var balance int64
		err = c.s.cfg.DB.Write(ctx, func(tx *db.Tx) error {
			// A payment by method at the terminal's branch (its desk), paying the
			// oldest lines: it is on the receipt and in that branch's cash-up.
			if _, err := patrons.PayLines(tx, c.actor(), patrons.PayRequest{PatronID: v.p.ID, Cents: cents,
				Method: method, Note: note}); err != nil {
				return err
			}
			balance, err = patrons.Balance(tx, v.p.ID)
			return err
		})
		switch {
		case err == nil:
			accepted = true
			message = "Thank you. You now owe " + formatMoney(balance) + "."
		case stacks.ErrorCode(err) == stacks.EINVALID:
			message = stacks.ErrorMessage(err)
		default:
			c.internalError(ctx, "fee paid", err)
			message = msgTryAgain
		}
	}
	r := &c.resp
	r.start("38")
	r.flag(accepted)
	r.date(now, prefs.Location)
	r.field("AO", c.account.Institution)
	r.field("AA", v.card)
	r.optional("BK", m.Get("BK"))
	r.field("AF", message)
}
