package sip

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// checkout answers 11 with 12. The desk's checkout runs with SIP's OverridePolicy
// deciding the blocks staff would confirm. A PIN (AD), when sent, must be right.
// The no-block due date is not used: the loan runs from now by the rules. An item
// the patron already has is answered as lent, with its due date and nothing
// changed (a kiosk sending its checkout again), unless the account's
// SameItemCheckout is renew: then the renewal policy decides.
func (c *conn) checkout(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	barcode := m.Get("AB")
	renewalPolicy := m.fixedAt(0, 1) == "Y"
	noBlock := m.fixedAt(1, 1) == "Y"

	var (
		res     circulation.CheckoutResult
		title   string
		message string
		ok      bool
	)
	v, err := c.findPatron(ctx, m, 0)
	switch {
	case err != nil:
		c.internalError(ctx, "checkout", err)
		message = msgTryAgain
	case v.p == nil:
		message = msgPatronNotFound
	case v.pinGiven && !v.pinOK:
		message = v.pinMessage()
	default:
		res, err = c.s.circ.Checkout(ctx, circulation.CheckoutRequest{
			Actor: c.actor(), PatronID: v.p.ID, Barcode: barcode,
			AutoConfirm:  OverridePolicy(renewalPolicy, noBlock),
			KeepExisting: c.account.Settings.SameItemCheckout != SameItemRenew,
		})
		var blocked *circulation.BlockedError
		var renewRefused *circulation.RenewRefusedError
		switch {
		case err == nil:
			ok, title = true, res.Loan.Title
			switch {
			case res.Renewed:
				message = "Renewed. Now due " + dueText(res.Loan.DueAt, prefs) + "."
			case res.AlreadyLent:
				message = "You already have this item. It is due " + dueText(res.Loan.DueAt, prefs) + "."
			}
		case errors.As(err, &blocked):
			title = blocked.Title
			message = blockMessage(firstBlock(blocked))
		case errors.As(err, &renewRefused):
			// The patron already has it and the renewal the policy allows was
			// refused: say why, as a renewal (29) would.
			title, message = renewRefused.Result.Loan.Title, renewRefused.Result.Message
		default:
			message = c.circulationError(ctx, "checkout", err)
		}
	}
	r := &c.resp
	r.start("12")
	r.ok(ok)
	r.flag(ok && res.Renewed) // renewal ok
	r.fixed("U")              // magnetic media: unknown
	r.flag(ok)                // desensitize
	r.date(now, prefs.Location)
	r.field("AO", c.account.Institution)
	r.field("AA", v.card)
	r.field("AB", barcode)
	r.field("AJ", title)
	if ok {
		r.b = append(r.b, "AH"...)
		r.date(res.Loan.DueAt, prefs.Location)
		r.b = append(r.b, '|')
		if res.FineCents > 0 { // a renewal of an overdue loan charged the time already late
			r.fixed("BT01|")
			r.field("BH", c.s.cfg.Currency)
			r.money("BV", res.FineCents)
		}
	} else {
		r.field("AH", "")
	}
	r.optional("AF", message)
}

// firstBlock returns the code to show for a blocked checkout: a refusal first, else
// the first block the policy did not confirm.
func firstBlock(e *circulation.BlockedError) string {
	for _, b := range e.Blocks {
		if !b.Overridable {
			return b.Code
		}
	}
	if len(e.Blocks) > 0 {
		return e.Blocks[0].Code
	}
	return ""
}

// circulationError is the screen message for an error of a circulation call; our
// own faults are logged.
func (c *conn) circulationError(ctx context.Context, what string, err error) string {
	switch stacks.ErrorCode(err) {
	case stacks.EINTERNAL:
		c.internalError(ctx, what, err)
		return msgTryAgain
	case stacks.ECONFLICT:
		// Conflicts are about the item's or patron's state, worded for staff.
		c.s.log.Info("sip "+what+" refused", "conn", c.id, "err", stacks.ErrorMessage(err))
		return "This cannot be done here. Please see staff at the desk."
	}
	return errorMessage(err, msgTryAgain)
}

// checkin answers 09 with 10, with what a sorter routes on: the permanent location
// (AQ, the home branch), the destination (CT), the alert type (CV: 01 hold here, 02
// hold elsewhere, 04 transfer, 99 other) and the sort bin (CL) from the mapping.
// The checkin happens at the account's branch, now: the return date of an off-line
// checkin is accepted but not back-dated, and an item that was not checked out is
// still checked in (as at the desk: it may fill a hold or need to go home).
func (c *conn) checkin(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	barcode := m.Get("AB")
	res, item, err := c.s.circ.CheckinWithItem(ctx, circulation.CheckinRequest{Actor: c.actor(), Barcode: barcode})

	outcome, message := OutcomeShelf, ""
	switch {
	case err != nil:
		outcome = OutcomeException
		if stacks.ErrorCode(err) == stacks.ENOTFOUND || stacks.ErrorCode(err) == stacks.EINVALID {
			message = blockMessage(circulation.BlockUnknownBarcode)
		} else {
			message = c.circulationError(ctx, "checkin", err)
		}
	case res.Withdrawn:
		outcome, message = OutcomeException, "This item is withdrawn. Do not put it back on the shelf."
	case res.Hold != nil && res.Hold.InTransit:
		outcome = OutcomeRemoteHold
	case res.Hold != nil:
		outcome = OutcomeHold
	case res.TransferTo != nil:
		outcome = OutcomeTransfer
	}
	if err == nil && message == "" && res.Message != "" {
		// A lost item's refund, a claim closed: the same words as the desk.
		message = res.Message
	}
	if err == nil && message == "" && res.ExpiredHold != nil {
		// The copy sat on the hold shelf past its pickup time: the hold ended, and
		// the alert type and hold fields are those of where the copy goes now.
		// No name: a self-check screen is read by whoever returns the item.
		message = "The hold this item was set aside for has expired and is ended."
	}

	ok := err == nil
	if ok && !res.WasOnLoan && !c.account.Settings.CheckedInOK {
		// Koha's and Evergreen's default: ok=0 for an item that was not on loan.
		ok = false
		if message == "" {
			message = "This item was not checked out."
		}
	}
	r := &c.resp
	r.start("10")
	r.ok(ok)
	r.flag(err == nil && !res.Withdrawn)   // resensitize
	r.fixed("U")                           // magnetic media: unknown
	r.flag(!ok || outcome != OutcomeShelf) // alert: as Koha, also for every ok 0
	r.date(now, prefs.Location)
	r.field("AO", c.account.Institution)
	r.field("AB", barcode)
	permanent := ""
	if item != nil {
		permanent = item.HomeBranchCode
	}
	r.field("AQ", permanent)
	r.optional("AJ", res.Title)
	r.optional("CL", c.sortBins().Bin(outcome))
	if res.WasOnLoan {
		r.optional("AA", res.PatronCard)
	}
	r.optional("CS", res.CallNumber)
	switch {
	case res.Hold != nil:
		r.field("CT", res.Hold.PickupBranchCode)
		r.field("CY", res.Hold.PatronCard)
		r.field("DA", res.Hold.PatronName)
	case res.TransferTo != nil:
		r.field("CT", res.TransferTo.Code)
	}
	r.optional("CV", outcome.alertType())
	r.optional("AF", message)
}

// Circulation status codes of message 18.
func circulationStatus(status string) string {
	switch status {
	case catalog.StatusAvailable:
		return "03"
	case catalog.StatusOnLoan:
		return "04"
	case catalog.StatusOnHoldShelf:
		return "08"
	case catalog.StatusInTransit:
		return "10"
	case catalog.StatusLost:
		return "12"
	case catalog.StatusMissing:
		return "13"
	}
	return "01" // other: withdrawn
}

// itemInformation answers 17 with 18.
func (c *conn) itemInformation(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	barcode := m.Get("AB")
	var st circulation.ItemState
	err := c.s.cfg.DB.Read(ctx, func(tx *db.Tx) error {
		var err error
		st, err = circulation.FindItemState(tx, barcode)
		return err
	})
	r := &c.resp
	r.start("18")
	if err != nil {
		r.fixed("01") // circulation status: other
	} else {
		r.fixed(circulationStatus(st.Status))
	}
	r.fixed("00") // security marker: other
	r.fixed("01") // fee type: other
	r.date(now, prefs.Location)
	if err != nil {
		r.field("AB", barcode)
		r.field("AJ", "")
		r.field("AF", c.itemError(ctx, err))
		return
	}
	r.field("CF", strconv.Itoa(st.HoldQueue))
	if st.OnLoan {
		r.b = append(r.b, "AH"...)
		r.date(st.DueAt, prefs.Location)
		r.b = append(r.b, '|')
	}
	if !st.PickupBy.IsZero() {
		r.b = append(r.b, "CM"...)
		r.date(st.PickupBy, prefs.Location)
		r.b = append(r.b, '|')
	}
	r.field("AB", st.Barcode)
	r.field("AJ", st.Title)
	r.field("BG", st.HomeBranchCode)
	r.field("AQ", st.HomeBranchCode)
	r.field("AP", st.CurrentBranchCode)
	r.optional("CS", st.CallNumber)
	r.optional("CH", st.SIPProperties)
	r.field("AF", catalog.StatusLabel(st.Status)+".")
}

// itemError is the screen message for an item that could not be read.
func (c *conn) itemError(ctx context.Context, err error) string {
	switch stacks.ErrorCode(err) {
	case stacks.ENOTFOUND, stacks.EINVALID:
		return blockMessage(circulation.BlockUnknownBarcode)
	}
	c.internalError(ctx, "item information", err)
	return msgTryAgain
}

// renew answers 29 with 30: the patron's loan of the item is renewed by the desk's
// rules. With third party allowed (Y), an item checked out to someone else is
// renewed for them; otherwise it must be the patron's.
func (c *conn) renew(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	thirdParty := m.fixedAt(0, 1) == "Y"
	barcode, _ := catalog.NormalizeBarcode(m.Get("AB"))
	if barcode == "" {
		barcode = m.Get("AB")
	}

	var (
		result  circulation.RenewResult
		title   string
		message string
	)
	v, err := c.findPatron(ctx, m, needLoans)
	if err != nil {
		c.internalError(ctx, "renew", err)
		message = msgTryAgain
	} else if message = v.problem(prefs, now); message == "" {
		var loanID int64
		for _, l := range v.loans {
			if l.Barcode == barcode {
				loanID, title = l.ID, l.Title
			}
		}
		switch {
		case loanID != 0:
			var rs []circulation.RenewResult
			rs, err = c.s.circ.Renew(ctx, circulation.RenewRequest{Actor: c.actor(), PatronID: v.p.ID, LoanIDs: []int64{loanID}})
			if err == nil && len(rs) == 1 {
				result = rs[0]
			}
		case thirdParty:
			result, err = c.s.circ.RenewItem(ctx, c.actor(), barcode)
			title = result.Loan.Title
		default:
			message = c.notYourLoan(ctx, barcode)
		}
		switch {
		case err != nil:
			message = c.circulationError(ctx, "renew", err)
		case message == "" && !result.OK:
			message = result.Message
		}
	}
	r := &c.resp
	r.start("30")
	r.ok(result.OK)
	r.flag(result.OK) // renewal ok
	r.fixed("U")      // magnetic media: unknown
	r.fixed("U")      // desensitize: the item is already out
	r.date(now, prefs.Location)
	r.field("AO", c.account.Institution)
	r.field("AA", v.card)
	r.field("AB", m.Get("AB"))
	r.field("AJ", title)
	if result.OK {
		r.b = append(r.b, "AH"...)
		r.date(result.Loan.DueAt, prefs.Location)
		r.b = append(r.b, '|')
		if result.FineCents > 0 {
			r.fixed("BT01|")
			r.field("BH", c.s.cfg.Currency)
			r.money("BV", result.FineCents)
		}
		message = "Renewed. Now due " + dueText(result.Loan.DueAt, prefs) + "."
	} else {
		r.field("AH", "")
	}
	r.optional("AF", message)
}

// renewAll answers 65 with 66: every loan of the patron the rules allow is renewed,
// in one transaction; the renewed (BM) and the refused (BN) are listed by barcode.
func (c *conn) renewAll(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	var (
		results []circulation.RenewResult
		message string
	)
	v, err := c.findPatron(ctx, m, 0)
	if err != nil {
		c.internalError(ctx, "renew all", err)
		message = msgTryAgain
	} else if message = v.problem(prefs, now); message == "" {
		results, err = c.s.circ.Renew(ctx, circulation.RenewRequest{Actor: c.actor(), PatronID: v.p.ID, All: true})
		if err != nil {
			message = c.circulationError(ctx, "renew all", err)
		}
	}
	ok := err == nil && message == ""
	renewed := 0
	for _, res := range results {
		if res.OK {
			renewed++
		}
	}
	if ok {
		message = renewedMessage(renewed, len(results))
	}
	r := &c.resp
	r.start("66")
	r.ok(ok)
	r.count(renewed, 4)
	r.count(len(results)-renewed, 4)
	r.date(now, prefs.Location)
	r.field("AO", c.account.Institution)
	for _, res := range results {
		if res.OK {
			r.field("BM", res.Loan.Barcode)
		}
	}
	for _, res := range results {
		if !res.OK {
			r.field("BN", res.Loan.Barcode)
		}
	}
	r.optional("AF", message)
}

func renewedMessage(renewed, of int) string {
	if of == 0 {
		return "You have nothing on loan to renew."
	}
	return "Renewed " + strconv.Itoa(renewed) + " of " + strconv.Itoa(of) + " items."
}

// dueText is a due date as a screen shows it.
func dueText(t time.Time, prefs library.Preferences) string {
	return t.In(prefs.Location).Format("2006-01-02")
}

// notYourLoan is the screen message for a renewal of an item that is not on loan
// to the patron: an unknown barcode is said to be one, as checkout and checkin
// say it.
func (c *conn) notYourLoan(ctx context.Context, barcode string) string {
	err := c.s.cfg.DB.Read(ctx, func(tx *db.Tx) error {
		_, err := catalog.FindItemByBarcode(tx, barcode)
		return err
	})
	switch stacks.ErrorCode(err) {
	case stacks.ENOTFOUND, stacks.EINVALID:
		return blockMessage(circulation.BlockUnknownBarcode)
	case "":
	default:
		c.internalError(ctx, "renew: find the item", err)
	}
	return "This item is not checked out to you."
}
