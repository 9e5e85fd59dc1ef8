package circulation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/patrons"
)

// RenewResult is the outcome of renewing one loan.
type RenewResult struct {
	Loan Loan
	OK   bool
	// Refusal says why a renewal was refused, as one of the Renew* codes, so
	// that each audience words it its own way (the patrons' site does); "" when
	// OK.
	Refusal string
	// Message says why a renewal was refused, or the new due date, as the desk
	// says it.
	Message string
	// FineCents is the overdue fine charged for the time already late, if any.
	FineCents int64
	// Overridable: the refusal is one staff may override with a reason
	// (RenewRequest.Override): renewals used up, another patron waiting.
	Overridable bool
}

// Why a renewal was refused (RenewResult.Refusal).
const (
	RenewBlocked     = "blocked"
	RenewCardExpired = "card_expired"
	RenewTooMany     = "too_many"
	RenewOnHold      = "on_hold"
	// RenewLost: the loan is declared lost or claimed returned.
	RenewLost = "lost"
	// RenewNotMoved: renewing now would not move the due date (a loan made
	// today): refused, so that no renewal is used up for nothing.
	RenewNotMoved = "not_moved"
)

// RenewRefusedError is a renewal refused when checkout offered to renew an item
// the patron already has (Checkout with BlockRenew confirmed): the result says
// why, so that the desk heads the refusal by its reason. It is an ECONFLICT.
type RenewRefusedError struct {
	Result RenewResult
}

func (e *RenewRefusedError) Error() string { return e.Result.Message }

// Unwrap gives the error's code and message to stacks.ErrorCode and
// stacks.ErrorMessage.
func (e *RenewRefusedError) Unwrap() error {
	return stacks.Errorf(stacks.ECONFLICT, "%s", e.Result.Message)
}

// maxOverrideReason bounds the reason staff give for an override.
const maxOverrideReason = 500

// RenewRequest asks to renew some or all of a patron's loans.
type RenewRequest struct {
	Actor    stacks.Actor
	PatronID int64
	// LoanIDs to renew; with All, every current loan of the patron.
	LoanIDs []int64
	All     bool
	// Override, when not blank, is the reason staff give for renewing despite a
	// refusal they may override (RenewResult.Overridable); each overridden
	// refusal is audited with it. Blank: no override.
	Override string
}

// Renew renews loans of one patron in one transaction. Each loan succeeds or is
// refused on its own; the results say which.
func (s *Service) Renew(ctx context.Context, req RenewRequest) ([]RenewResult, error) {
	if err := requireActor(req.Actor); err != nil {
		return nil, err
	}
	if !req.All && len(req.LoanIDs) == 0 {
		return nil, stacks.Errorf(stacks.EINVALID, "Select the loans to renew, or choose Renew all.")
	}
	req.Override = strings.TrimSpace(req.Override)
	if len(req.Override) > maxOverrideReason {
		return nil, stacks.FieldErrorf("override", stacks.EINVALID, "The reason is too long: say it in at most %d characters.", maxOverrideReason)
	}
	if req.Override != "" && req.Actor.StaffID == 0 {
		// The patrons' site and self-check machines act for patrons, not staff.
		return nil, stacks.Errorf(stacks.EFORBIDDEN, "Only staff may renew a loan despite a refusal.")
	}
	prefs, err := s.prefs(ctx)
	if err != nil {
		return nil, err
	}
	var out []RenewResult
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		out = nil
		p, err := patrons.FindByID(tx, req.PatronID)
		if err != nil {
			return err
		}
		loans, err := currentLoanItems(tx, p.ID)
		if err != nil {
			return err
		}
		want := map[int64]bool{}
		for _, id := range req.LoanIDs {
			want[id] = true
		}
		for _, it := range loans {
			if !req.All && !want[it.LoanID] {
				continue
			}
			delete(want, it.LoanID)
			r, err := s.renewOverride(tx, req.Actor, p, it, prefs.Location, req.Override)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		if len(want) > 0 {
			return stacks.Errorf(stacks.ECONFLICT, "Some of the selected loans are no longer current for %s; reload the page.", p.Name())
		}
		return nil
	})
	return out, err
}

// RenewItem renews the current loan of the item with barcode, whoever has it (a
// rescan at the desk, or SIP).
func (s *Service) RenewItem(ctx context.Context, actor stacks.Actor, barcode string) (RenewResult, error) {
	barcode, prefs, err := s.prepare(ctx, actor, barcode)
	if err != nil {
		return RenewResult{}, err
	}
	var r RenewResult
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		it, err := findItemWithLoan(tx, barcode)
		if err != nil {
			return err
		}
		if it.LoanID == 0 {
			return stacks.Errorf(stacks.ECONFLICT, "%s (%s) is not checked out, so it cannot be renewed.", it.Title, it.Barcode)
		}
		p, err := patrons.FindByID(tx, it.LoanPatronID)
		if err != nil {
			return err
		}
		r, err = s.renew(tx, actor, p, it, prefs.Location)
		return err
	})
	return r, err
}

// currentLoanItems returns a patron's current loans with their items, in one query.
func currentLoanItems(tx *db.Tx, patronID int64) ([]*itemWithLoan, error) {
	rows, err := tx.Query(`SELECT `+catalog.ItemColumns+`,
			l.id, l.patron_id, l.branch_id, l.due_at, l.issued_at, l.renewals,
			p.category_id, p.card, p.first_name || ' ' || p.surname, l.lost_at, l.claimed_returned_at`+catalog.ItemFrom+`
		JOIN loans l ON l.item_id = i.id AND l.returned_at IS NULL
		JOIN patrons p ON p.id = l.patron_id
		WHERE l.patron_id = ?
		ORDER BY l.due_at, l.id`, patronID)
	if err != nil {
		return nil, fmt.Errorf("current loans: %w", err)
	}
	defer rows.Close()
	var out []*itemWithLoan
	for rows.Next() {
		var it itemWithLoan
		dest := append(it.ItemScanDest(), &it.LoanID, &it.LoanPatronID, &it.LoanBranchID, &it.LoanDue, &it.LoanIssued,
			&it.LoanRenewals, &it.BorrowerCategory, &it.BorrowerCard, &it.BorrowerName, &it.LoanLostAt, &it.LoanClaimedAt)
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, &it)
	}
	return out, rows.Err()
}

// renew renews one loan if the rules allow, with no override.
func (s *Service) renew(tx *db.Tx, actor stacks.Actor, p *patrons.Patron, it *itemWithLoan, loc *time.Location) (RenewResult, error) {
	return s.renewOverride(tx, actor, p, it, loc, "")
}

// renewOverride renews one loan if the rules allow: the patron in good standing,
// renewals left, no hold that needs the copy, and a due date that moves. The new
// due date runs from now by the rule; a renewal that would not move it (a loan made
// today) is refused and not counted. Renewals used up and another patron waiting
// are refusals staff may override, giving reason (not blank): each is audited.
// Time already overdue is charged now, as at a return.
func (s *Service) renewOverride(tx *db.Tx, actor stacks.Actor, p *patrons.Patron, it *itemWithLoan, loc *time.Location, reason string) (RenewResult, error) {
	now := tx.Now()
	r := RenewResult{Loan: loanOf(it)}
	refuse := func(code, format string, args ...any) (RenewResult, error) {
		r.Refusal = code
		r.Message = fmt.Sprintf(format, args...)
		return r, nil
	}
	if it.LoanLostAt.Valid {
		return refuse(RenewLost, "%s cannot be renewed: it is declared lost.", it.Title)
	}
	if it.LoanClaimedAt.Valid {
		return refuse(RenewLost, "%s cannot be renewed: the patron claims to have returned it.", it.Title)
	}
	if p.Blocked {
		return refuse(RenewBlocked, "%s cannot be renewed: %s is blocked by staff (%s).", it.Title, p.Name(), p.BlockNote)
	}
	if p.Expired(now.In(loc)) {
		return refuse(RenewCardExpired, "%s cannot be renewed: card %s expired on %s; renew the card first.", it.Title, p.Card, p.ExpiresOn.Format("2006-01-02"))
	}
	rule, err := ResolveRule(tx, p.CategoryID, it.ItemTypeID, it.LoanBranchID)
	if err != nil {
		return r, err
	}
	r.Loan.RenewalsAllowed = rule.Renewals
	// The refusals staff may override: gathered, so that an override names
	// them all.
	type refusal struct{ code, msg string }
	var overridable []refusal
	if it.LoanRenewals >= rule.Renewals {
		overridable = append(overridable, refusal{RenewTooMany,
			fmt.Sprintf("it has been renewed %d of %d times allowed", it.LoanRenewals, rule.Renewals)})
	}
	blocked, err := holds.RenewalBlocked(tx, &it.Item, today(now, loc))
	if err != nil {
		return r, err
	}
	if blocked {
		overridable = append(overridable, refusal{RenewOnHold, "another patron is waiting for it"})
	}
	if len(overridable) > 0 && reason == "" {
		msgs := make([]string, len(overridable))
		for i, o := range overridable {
			msgs[i] = o.msg
		}
		r.Overridable = true
		return refuse(overridable[0].code, "%s cannot be renewed: %s.", it.Title, strings.Join(msgs, "; "))
	}
	due, err := dueAt(tx, rule, actor.BranchID, loc)
	if err != nil {
		return r, err
	}
	if !due.After(it.LoanDue.Time) {
		return notMovedResult(r, it, loc), nil
	}
	if now.After(it.LoanDue.Time) {
		fine, late, err := overdueFine(tx, it, now, loc)
		if err != nil {
			return r, err
		}
		if fine > 0 {
			desc := fmt.Sprintf("Overdue at renewal: %s (%s), %s late", it.Title, it.Barcode, late)
			if err := patrons.Charge(tx, actor, it.LoanPatronID, "overdue", fine, it.LoanID, desc); err != nil {
				return r, err
			}
			r.FineCents = fine
		}
	}
	var renewals int
	err = tx.QueryRow(`UPDATE loans SET due_at = ?, renewals = renewals + 1 WHERE id = ? AND returned_at IS NULL RETURNING renewals`,
		db.FormatTime(due), it.LoanID).Scan(&renewals)
	if errors.Is(err, sql.ErrNoRows) {
		return r, stacks.Errorf(stacks.ECONFLICT, "%s was checked in a moment ago; it is no longer on loan.", it.Title)
	} else if err != nil {
		return r, fmt.Errorf("renew loan %d: %w", it.LoanID, err)
	}
	for _, o := range overridable {
		if err := tx.Audit(actor, "renew.override", "loan", it.LoanID, o.code+": "+o.msg+". Reason: "+reason); err != nil {
			return r, err
		}
	}
	r.OK = true
	r.Loan.DueAt = due
	r.Loan.Renewals = renewals
	r.Message = fmt.Sprintf("%s renewed; now due %s.", it.Title, due.In(loc).Format("2006-01-02"))
	if len(overridable) > 0 {
		r.Message = fmt.Sprintf("%s renewed by staff override (%s); now due %s.", it.Title, reason, due.In(loc).Format("2006-01-02"))
	}
	return r, nil
}

func loanOf(it *itemWithLoan) Loan {
	return Loan{ID: it.LoanID, ItemID: it.ID, Barcode: it.Barcode, RecordID: it.RecordID, Title: it.Title, Author: it.Author,
		CallNumber: it.CallNumber, PatronID: it.LoanPatronID, IssuedAt: it.LoanIssued.Time, DueAt: it.LoanDue.Time, Renewals: it.LoanRenewals,
		LostAt: it.LoanLostAt.Time, ClaimedAt: it.LoanClaimedAt.Time}
}

// notMoved returns the refusal of renewing the patron's loan of it now when the
// renewal would not move its due date, and nil when it would.
func notMoved(tx *db.Tx, actor stacks.Actor, p *patrons.Patron, it *itemWithLoan, loc *time.Location) (*RenewResult, error) {
	rule, err := ResolveRule(tx, p.CategoryID, it.ItemTypeID, it.LoanBranchID)
	if err != nil {
		return nil, err
	}
	due, err := dueAt(tx, rule, actor.BranchID, loc)
	if err != nil || due.After(it.LoanDue.Time) {
		return nil, err
	}
	r := notMovedResult(RenewResult{Loan: loanOf(it)}, it, loc)
	r.Loan.RenewalsAllowed = rule.Renewals
	return &r, nil
}

// notMovedResult is r refused because renewing would not move the due date.
func notMovedResult(r RenewResult, it *itemWithLoan, loc *time.Location) RenewResult {
	r.Refusal = RenewNotMoved
	r.Message = fmt.Sprintf("%s cannot be renewed now: it is already due %s, and renewing today would not move that date. No renewal was used.",
		it.Title, it.LoanDue.Time.In(loc).Format("2006-01-02"))
	return r
}
