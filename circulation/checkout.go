package circulation

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// CheckoutRequest asks to lend the item with Barcode to a patron.
type CheckoutRequest struct {
	// Actor is who lends, and at which branch (the loan's branch).
	Actor    stacks.Actor
	PatronID int64
	Barcode  string
	// Confirm lists the codes of the blocks staff confirmed.
	Confirm []string
	// AutoConfirm, if set, decides overridable blocks without staff: SIP's policy.
	AutoConfirm func(Block) bool
	// KeepExisting: when the patron already has the item (an ordinary loan, not
	// declared lost or claimed returned), the checkout returns that loan as it is,
	// with AlreadyLent set, and writes nothing: no renewal is offered or spent. A
	// self-check that sends its checkout again, not having read the first answer,
	// is told the loan stands.
	KeepExisting bool
}

// CheckoutResult is a completed checkout.
type CheckoutResult struct {
	Loan Loan
	// Renewed: the patron already had the item, and the loan was renewed instead.
	Renewed bool
	// AlreadyLent: the patron already had the item and the request asked to keep
	// the loan (KeepExisting): Loan is that loan, unchanged.
	AlreadyLent bool
	// Overrides are the blocks staff confirmed, as recorded in the audit log.
	Overrides []Block
	// FilledHold is the patron's hold this checkout fulfilled, if any.
	FilledHold int64
	// FineCents is the overdue fine charged to the previous borrower, if the item
	// was on loan to someone else and checked in first.
	FineCents int64
	// Message is what checking the item in from the previous borrower did beyond
	// the fine: a lost loan's bill reversed ("Lost item returned: 25.00 refunded
	// ..."), a claim closed. Empty otherwise. The desk shows it.
	Message string
}

// Checkout lends an item, in one transaction. It returns a *BlockedError when the
// checkout is refused or needs staff confirmation; confirming means calling again
// with the block codes in Confirm.
func (s *Service) Checkout(ctx context.Context, req CheckoutRequest) (CheckoutResult, error) {
	barcode, prefs, err := s.prepare(ctx, req.Actor, req.Barcode)
	if err != nil {
		return CheckoutResult{}, err
	}
	k, err := s.known(ctx, req.Actor.BranchID, prefs.Location)
	if err != nil {
		return CheckoutResult{}, err
	}
	var res CheckoutResult
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		res = CheckoutResult{}
		return s.checkout(tx, req, barcode, prefs, k, &res)
	})
	return res, err
}

// checkout lends the item in two steps: collect the blocks (what stands in the
// way, read in tx), then, when each is confirmed, make the loan. A patron who
// already has the item is offered a renewal instead (lendAgain). k is what the
// checkout may take from memory (nil: nothing).
func (s *Service) checkout(tx *db.Tx, req CheckoutRequest, barcode string, prefs library.Preferences, k *known, res *CheckoutResult) error {
	c, err := collectBlocks(tx, req, barcode, prefs, k)
	if err != nil {
		return err
	}
	if c.again {
		return s.lendAgain(tx, req, c, prefs.Location, res)
	}
	for _, b := range c.blocked.Blocks {
		if !req.confirmed(b) {
			return c.blocked
		}
	}
	return makeLoan(tx, req, c, prefs.Location, k, res)
}

// confirmed reports whether staff confirmed the block, or SIP's policy does.
func (req CheckoutRequest) confirmed(b Block) bool {
	return slices.Contains(req.Confirm, b.Code) || (req.AutoConfirm != nil && req.AutoConfirm(b))
}

// lending is what a checkout found before it lends: the borrower, the copy,
// and, for a new loan, the rule, the holds on the copy and the blocks staff
// must confirm.
type lending struct {
	patron   *patrons.Patron
	standing patrons.StandingSummary
	item     *itemWithLoan
	// again: the patron already has the copy (rule, holds and blocks are
	// then not read).
	again   bool
	rule    Rule
	holds   holds.CheckoutCheck
	blocked *BlockedError
}

// collectBlocks reads the patron and the copy and says what stands in the way of
// lending it: a refusal (an unknown barcode, an expired card, a blocked patron,
// a withdrawn copy) comes back as the error; the blocks staff may confirm come
// back in the lending's blocked.
func collectBlocks(tx *db.Tx, req CheckoutRequest, barcode string, prefs library.Preferences, k *known) (*lending, error) {
	c := &lending{}
	var err error
	if c.patron, c.standing, err = patrons.FindWithStanding(tx, req.PatronID); err != nil {
		return nil, err
	}
	c.item, err = findItemWithLoan(tx, barcode)
	if stacks.ErrorCode(err) == stacks.ENOTFOUND {
		return nil, &BlockedError{Barcode: barcode, Blocks: []Block{{Code: BlockUnknownBarcode, Message: stacks.ErrorMessage(err)}}}
	} else if err != nil {
		return nil, err
	}
	c.blocked = &BlockedError{Barcode: barcode, Title: c.item.Title}
	if c.blocked.Blocks = refusals(c.patron, c.item, tx.Now().In(prefs.Location)); len(c.blocked.Blocks) > 0 {
		return nil, c.blocked
	}
	if c.item.LoanPatronID == c.patron.ID {
		c.again = true
		return c, nil
	}
	if c.rule, err = k.rule(tx, c.patron.CategoryID, c.item.ItemTypeID, req.Actor.BranchID); err != nil {
		return nil, err
	}
	if c.holds, err = holds.CheckAtCheckout(tx, &c.item.Item, c.patron.ID, today(tx.Now(), prefs.Location)); err != nil {
		return nil, err
	}
	if err := c.confirmations(tx, prefs); err != nil {
		return nil, err
	}
	return c, nil
}

// refusals are the blocks nobody can confirm at the desk.
func refusals(p *patrons.Patron, it *itemWithLoan, now time.Time) []Block {
	var bs []Block
	if p.Expired(now) {
		bs = append(bs, Block{Code: BlockCardExpired,
			Message: fmt.Sprintf("Card %s expired on %s; renew it on the patron page before lending.", p.Card, p.ExpiresOn.Format("2006-01-02"))})
	}
	if p.Blocked {
		bs = append(bs, Block{Code: BlockPatronBlocked,
			Message: fmt.Sprintf("%s is blocked by staff: %s", p.Name(), p.BlockNote)})
	}
	if it.Status == catalog.StatusWithdrawn {
		bs = append(bs, Block{Code: BlockWithdrawn,
			Message: fmt.Sprintf("%s (%s) was withdrawn from the collection and cannot be lent.", it.Title, it.Barcode)})
	}
	return bs
}

// confirmations adds the blocks staff may confirm: fines over the limit, the
// copy on loan to another patron or kept for another's hold, the loan limit,
// a copy not for loan, a copy marked lost or missing.
func (c *lending) confirmations(tx *db.Tx, prefs library.Preferences) error {
	p, it, hc, loc := c.patron, c.item, c.holds, prefs.Location
	add := func(code, msg string) {
		c.blocked.Blocks = append(c.blocked.Blocks, Block{Code: code, Overridable: true, Message: msg})
	}
	if c.standing.BalanceCents > prefs.FinesLimitCents {
		add(BlockFines, fmt.Sprintf("%s owes %s in fines; the limit is %s.", p.Name(), formatMoney(c.standing.BalanceCents), formatMoney(prefs.FinesLimitCents)))
	}
	if it.LoanID != 0 {
		add(BlockOnLoanToOther, fmt.Sprintf("%s is checked out to %s (%s), due %s. Confirming checks it in from them first.",
			it.Title, it.BorrowerName, it.BorrowerCard, it.LoanDue.Time.In(loc).Format("2006-01-02")))
	}
	if hc.Trapped != nil && hc.Trapped.PatronID != p.ID {
		where := "waiting on the hold shelf"
		if hc.Trapped.Status == holds.StatusInTransit {
			where = "in transit to fill a hold"
		}
		add(BlockHoldShelf, fmt.Sprintf("%s is %s for %s (%s). Confirming puts that hold back at the head of its queue.", it.Title, where, hc.Trapped.PatronName, hc.Trapped.PatronCard))
	} else if hc.Trapped == nil && hc.Queued != nil {
		add(BlockOnHold, fmt.Sprintf("%s is on hold for %s (%s).", it.Title, hc.Queued.PatronName, hc.Queued.PatronCard))
	}
	notForLoan := it.NotForLoan || c.rule.LoanPeriod == 0
	if !notForLoan {
		// A rule for one item type limits loans of that type (Koha's way); a rule for
		// any type limits all loans.
		loans, what := c.standing.Loans, "items"
		if c.rule.ItemTypeID != 0 {
			if err := tx.QueryRow(`SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id
				WHERE l.patron_id = ? AND l.returned_at IS NULL AND i.item_type_id = ?`, p.ID, c.rule.ItemTypeID).Scan(&loans); err != nil {
				return fmt.Errorf("count loans: %w", err)
			}
			what = c.rule.ItemTypeName + " items"
		}
		if loans >= c.rule.MaxLoans {
			add(BlockMaxLoans, fmt.Sprintf("%s has %d %s out; the limit is %d.", p.Name(), loans, what, c.rule.MaxLoans))
		}
	}
	if notForLoan {
		add(BlockNotForLoan, fmt.Sprintf("%s is not for loan (%s): it is for use in the library.", it.Title, it.ItemTypeName))
	}
	if it.Status == catalog.StatusLost || it.Status == catalog.StatusMissing {
		msg := fmt.Sprintf("%s is marked %s. Confirming lends it and marks it found.", it.Title, catalog.StatusLabel(it.Status))
		if it.LoanID != 0 && it.LoanLostAt.Valid {
			msg += fmt.Sprintf(" It is a lost loan of %s (%s): their lost bill will be reversed by the rule, as at check in.", it.BorrowerName, it.BorrowerCard)
		}
		add(BlockLost, msg)
	}
	return nil
}

// lendAgain answers a checkout of a copy the patron already has: a renewal is
// offered instead, unless a renewal would not move the due date (the item
// scanned twice, a loan made today): that is refused at once, with nothing to
// decide. (A confirmed renewal goes to renew, which refuses it the same way.)
// With KeepExisting, the loan is returned as it is.
func (s *Service) lendAgain(tx *db.Tx, req CheckoutRequest, c *lending, loc *time.Location, res *CheckoutResult) error {
	p, it := c.patron, c.item
	if req.KeepExisting && !it.LoanLostAt.Valid && !it.LoanClaimedAt.Valid {
		rule, err := ResolveRule(tx, p.CategoryID, it.ItemTypeID, it.LoanBranchID)
		if err != nil {
			return err
		}
		res.Loan, res.AlreadyLent = loanOf(it), true
		res.Loan.RenewalsAllowed = rule.Renewals
		return nil
	}
	b := Block{Code: BlockRenew, Overridable: true,
		Message: fmt.Sprintf("%s is already checked out to %s, due %s. Renew it?", it.Title, p.Name(), it.LoanDue.Time.In(loc).Format("2006-01-02"))}
	if !req.confirmed(b) {
		r, err := notMoved(tx, req.Actor, p, it, loc)
		if err != nil {
			return err
		} else if r != nil {
			return &RenewRefusedError{Result: *r}
		}
		c.blocked.Blocks = append(c.blocked.Blocks, b)
		return c.blocked
	}
	r, err := s.renew(tx, req.Actor, p, it, loc)
	if err != nil {
		return err
	}
	if !r.OK {
		return &RenewRefusedError{Result: r}
	}
	res.Loan, res.Renewed, res.FineCents = r.Loan, true, r.FineCents
	return nil
}

// makeLoan lends the copy, every block confirmed: first it undoes what the
// confirmations allow (the other patron's loan closed, the other patron's hold
// put back), fills the patron's own hold, then writes the loan, the copy's new
// place and an audit line per confirmed block.
func makeLoan(tx *db.Tx, req CheckoutRequest, c *lending, loc *time.Location, k *known, res *CheckoutResult) error {
	p, it, hc, now := c.patron, c.item, c.holds, tx.Now()
	if it.LoanID != 0 {
		fine, msg, err := closeLoan(tx, req.Actor, it, req.Actor.BranchID, loc)
		if err != nil {
			return err
		}
		res.FineCents, res.Message = fine, msg
	}
	if hc.Trapped != nil && hc.Trapped.PatronID != p.ID {
		if err := holds.Release(tx, req.Actor, hc.Trapped.HoldID, "copy lent to "+p.Card+" by staff override"); err != nil {
			return err
		}
	}
	own := hc.Own
	if hc.Trapped != nil && hc.Trapped.PatronID == p.ID {
		own = hc.Trapped
	}
	if own != nil {
		if err := holds.Fill(tx, req.Actor, own.HoldID); err != nil {
			return err
		}
		res.FilledHold = own.HoldID
	}

	due, err := k.dueAt(tx, c.rule, req.Actor.BranchID, loc)
	if err != nil {
		return err
	}
	var staffID any
	if req.Actor.StaffID != 0 {
		staffID = req.Actor.StaffID
	}
	var loanID int64
	err = tx.QueryRow(`INSERT INTO loans (item_id, patron_id, branch_id, staff_id, issued_at, due_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		it.ID, p.ID, req.Actor.BranchID, staffID, db.FormatTime(now), db.FormatTime(due)).Scan(&loanID)
	if db.IsUniqueViolation(err) {
		return stacks.Errorf(stacks.ECONFLICT, "%s was checked out at another desk a moment ago; scan it again to see to whom.", it.Title)
	} else if err != nil {
		return fmt.Errorf("insert loan: %w", err)
	}
	if err := catalog.SetItemLocation(tx, it.ID, catalog.StatusOnLoan, req.Actor.BranchID, 0); err != nil {
		return err
	}
	for _, b := range c.blocked.Blocks {
		if err := tx.Audit(req.Actor, "checkout.override", "loan", loanID, b.Code+": "+b.Message); err != nil {
			return err
		}
	}
	res.Overrides = c.blocked.Blocks
	res.Loan = Loan{ID: loanID, ItemID: it.ID, Barcode: it.Barcode, RecordID: it.RecordID, Title: it.Title, Author: it.Author,
		CallNumber: it.CallNumber, PatronID: p.ID, IssuedAt: now, DueAt: due, RenewalsAllowed: c.rule.Renewals}
	return nil
}

// closeLoan ends the current loan of it, returned at branchID now, and charges the
// overdue fine by the rule (counted until the loan was declared lost or claimed
// returned, if it was). A lost loan's bill is refunded or voided by the rule. It
// returns the fine and, for a lost or claimed-returned loan, what the desk is told.
func closeLoan(tx *db.Tx, actor stacks.Actor, it *itemWithLoan, branchID int64, loc *time.Location) (fine int64, msg string, err error) {
	now := tx.Now()
	if _, err := tx.Exec(`UPDATE loans SET returned_at = ?, return_branch_id = ? WHERE id = ?`,
		db.FormatTime(now), branchID, it.LoanID); err != nil {
		return 0, "", fmt.Errorf("close loan %d: %w", it.LoanID, err)
	}
	switch {
	case it.LoanLostAt.Valid:
		if msg, err = returnLost(tx, actor, it); err != nil {
			return 0, "", err
		}
	case it.LoanClaimedAt.Valid:
		msg = "Claimed returned item found: the claim is closed."
	}
	end := it.fineEnd(now)
	if !end.After(it.LoanDue.Time) || (it.LoanLostAt.Valid && it.LoanLostFineSettled) {
		// Not late; or lost, and the declaration charged (or forgave) the fine
		// up to then: nothing more is owed for the lost period.
		return 0, msg, nil
	}
	fine, late, err := overdueFine(tx, it, end, loc)
	if err != nil || fine == 0 {
		return 0, msg, err
	}
	desc := fmt.Sprintf("Overdue: %s (%s), %s late", it.Title, it.Barcode, late)
	if err := patrons.Charge(tx, actor, it.LoanPatronID, "overdue", fine, it.LoanID, desc); err != nil {
		return 0, "", err
	}
	if msg != "" {
		// The desk is told every charge the return made.
		msg += " Overdue fine charged: " + formatMoney(fine) + "."
	}
	return fine, msg, nil
}

// overdueFine computes the fine for it's loan returned at when, by the rule of the
// loan's branch, counting only days the branch was open.
// It also says how late, in words ("3 open days").
func overdueFine(tx *db.Tx, it *itemWithLoan, when time.Time, loc *time.Location) (fine int64, late string, err error) {
	rule, err := ResolveRule(tx, it.BorrowerCategory, it.ItemTypeID, it.LoanBranchID)
	if err != nil {
		return 0, "", err
	}
	if rule.FineCents == 0 {
		return 0, "", nil
	}
	cal, err := library.LoadCalendar(tx, it.LoanBranchID, loc, it.LoanDue.Time.AddDate(0, 0, -1), when.AddDate(0, 0, 1))
	if err != nil {
		return 0, "", err
	}
	units := cal.LateUnits(it.LoanDue.Time, when, rule.LoanUnit)
	late = fmt.Sprintf("%d open day", units)
	if rule.LoanUnit == "hours" {
		late = fmt.Sprintf("%d hour", units)
	}
	if units != 1 {
		late += "s"
	}
	fine = rule.Fine(units)
	if rule.FineCapCents > 0 && fine > 0 {
		// The cap is per loan: a renewal may already have charged part of it.
		var charged int64
		if err := tx.QueryRow(`SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE loan_id = ? AND kind = 'overdue'`,
			it.LoanID).Scan(&charged); err != nil {
			return 0, "", fmt.Errorf("fines charged for loan %d: %w", it.LoanID, err)
		}
		fine = max(0, min(fine, rule.FineCapCents-charged))
	}
	return fine, late, nil
}
