package circulation

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/notices"
)

// CheckinRequest asks to check in the item with Barcode at the actor's branch.
type CheckinRequest struct {
	Actor   stacks.Actor
	Barcode string
	// Batch names the desk session's running list of checkins ("" for none).
	Batch string
}

// BranchRef names a branch.
type BranchRef struct {
	ID   int64
	Code string
	Name string
}

// CheckinResult is what a checkin did.
type CheckinResult struct {
	ID         int64
	Barcode    string
	Title      string
	Author     string
	CallNumber string
	// WasOnLoan is false for an item that was not checked out (harmless).
	WasOnLoan  bool
	PatronID   int64
	PatronName string
	PatronCard string
	DueAt      time.Time
	Overdue    bool
	FineCents  int64
	// FoundLost: the item had been marked lost or missing.
	FoundLost bool
	// Message tells the desk what the return of a lost, missing or claimed-returned
	// item did ("Lost item returned: 25.00 refunded ..."); empty otherwise.
	Message string
	// Withdrawn: the item is withdrawn and must not go back on the shelf.
	Withdrawn bool
	// PatronMessage is the borrower's message for the desk, if they have one.
	PatronMessage string
	// TransferTo is set when the item must travel to another branch (its home).
	TransferTo *BranchRef
	// ReceivedFrom is set when the item was in transit to this branch: the
	// branch that sent it.
	ReceivedFrom *BranchRef
	// Hold is set when the item fills a hold.
	Hold *holds.Trap
	// ExpiredHold is set when the item was set aside for a hold whose pickup time
	// was over: the checkin ended it, as clearing it on the Holds page does, and
	// Hold or TransferTo say where the copy goes now (neither: back on the shelf).
	ExpiredHold *holds.Expired
	At          time.Time
	// Pending: the checkin is on a desk's list and needs action there (needsAction)
	// that staff have not acknowledged yet (AcknowledgeCheckin).
	Pending bool
}

// needsAction says whether the desk must act on the checkin: put the copy on the
// hold shelf or send it to another branch, keep a withdrawn copy off the shelf, or
// read its message to the patron. The Check in page keeps such a checkin in view
// until staff acknowledge it.
func (c CheckinResult) needsAction() bool {
	return c.itemNeedsAction() || c.PatronMessage != ""
}

func (c CheckinResult) itemNeedsAction() bool {
	return c.Hold != nil || c.TransferTo != nil || c.Withdrawn || c.Message != ""
}

// Checkin checks an item in, in one transaction: closes the loan into the history,
// charges the overdue fine, ends the hold it waited for on the hold shelf if that
// hold's pickup time is over, traps it for a hold or sends it home, and records the
// checkin in the desk's running list.
func (s *Service) Checkin(ctx context.Context, req CheckinRequest) (CheckinResult, error) {
	barcode, prefs, err := s.prepare(ctx, req.Actor, req.Barcode)
	if err != nil {
		return CheckinResult{}, err
	}
	var res CheckinResult
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		res = CheckinResult{}
		return s.checkin(tx, req, barcode, prefs.Location, &res)
	})
	return res, err
}

func (s *Service) checkin(tx *db.Tx, req CheckinRequest, barcode string, loc *time.Location, res *CheckinResult) error {
	now := tx.Now()
	here := req.Actor.BranchID
	it, err := findItemWithLoan(tx, barcode)
	if err != nil {
		return err
	}
	*res = CheckinResult{Barcode: it.Barcode, Title: it.Title, Author: it.Author, CallNumber: it.CallNumber, At: now}
	if it.LoanID != 0 {
		res.WasOnLoan = true
		res.PatronID, res.PatronName, res.PatronCard = it.LoanPatronID, it.BorrowerName, it.BorrowerCard
		res.PatronMessage = it.BorrowerDeskMessage
		res.DueAt = it.LoanDue.Time
		res.Overdue = now.After(it.LoanDue.Time)
		fine, msg, err := closeLoan(tx, req.Actor, it, here, loc)
		if err != nil {
			return err
		}
		res.FineCents, res.Message = fine, msg
	}

	if it.Status == catalog.StatusInTransit && it.TransitToID == here && it.CurrentBranchID != here {
		from := it.CurrentBranch
		from.ID = it.CurrentBranchID
		res.ReceivedFrom = &from
	}

	switch it.Status {
	case catalog.StatusWithdrawn:
		res.Withdrawn = true
		if err := catalog.SetItemLocation(tx, it.ID, catalog.StatusWithdrawn, here, 0); err != nil {
			return err
		}
	default:
		res.FoundLost = it.Status == catalog.StatusLost || it.Status == catalog.StatusMissing
		if res.FoundLost && res.Message == "" {
			res.Message = "Item marked " + catalog.StatusLabel(it.Status) + " found: it is back in circulation."
		}
		if it.Status == catalog.StatusOnHoldShelf {
			// Only a copy on the hold shelf is set aside for a waiting hold.
			if res.ExpiredHold, err = holds.ExpireAtCheckin(tx, req.Actor, it.ID); err != nil {
				return err
			}
		}
		res.Hold, res.TransferTo, err = placeItem(tx, req.Actor, &it.Item, here, loc)
		if err != nil {
			return err
		}
	}

	var loanID, staffID, transferID, holdID, receivedFromID, expiredID sql.NullInt64
	if it.LoanID != 0 {
		loanID = sql.NullInt64{Int64: it.LoanID, Valid: true}
	}
	if req.Actor.StaffID != 0 {
		staffID = sql.NullInt64{Int64: req.Actor.StaffID, Valid: true}
	}
	if res.TransferTo != nil {
		transferID = sql.NullInt64{Int64: res.TransferTo.ID, Valid: true}
	}
	if res.ReceivedFrom != nil {
		receivedFromID = sql.NullInt64{Int64: res.ReceivedFrom.ID, Valid: true}
	}
	if res.ExpiredHold != nil {
		expiredID = sql.NullInt64{Int64: res.ExpiredHold.HoldID, Valid: true}
	}
	inTransit := false
	if res.Hold != nil {
		holdID = sql.NullInt64{Int64: res.Hold.HoldID, Valid: true}
		inTransit = res.Hold.InTransit
	}
	res.Pending = req.Batch != "" && res.needsAction()
	if res.Pending && !res.itemNeedsAction() {
		// Only the borrower's message: once on the list while it waits there.
		if res.Pending, err = noPatronMessageWaiting(tx, req.Batch, res.PatronID); err != nil {
			return err
		}
	}
	err = tx.QueryRow(`INSERT INTO checkins (batch, at, item_id, loan_id, branch_id, staff_id, actor, fine_cents, transfer_to_id, hold_id, hold_in_transit, message, received_from_id, expired_hold_id, needs_ack)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		req.Batch, db.FormatTime(now), it.ID, loanID, here, staffID, req.Actor.Name, res.FineCents, transferID, holdID, inTransit, res.Message, receivedFromID, expiredID, res.Pending).Scan(&res.ID)
	if err != nil {
		return fmt.Errorf("record checkin: %w", err)
	}
	return nil
}

// placeItem puts a copy that is free at branch here back into circulation: set
// aside for the next hold it can fill, or sent home to its branch, or on the shelf.
func placeItem(tx *db.Tx, actor stacks.Actor, it *catalog.Item, here int64, loc *time.Location) (*holds.Trap, *BranchRef, error) {
	now := tx.Now()
	trap, err := holds.TrapAtCheckin(tx, actor, it, here, today(now, loc), func(pickupBranchID, categoryID int64) (time.Time, error) {
		rule, err := ResolveRule(tx, categoryID, it.ItemTypeID, pickupBranchID)
		if err != nil {
			return time.Time{}, err
		}
		cal, err := library.LoadCalendar(tx, pickupBranchID, loc, now, now.AddDate(0, 0, 2*rule.HoldPickupDays+60))
		if err != nil {
			return time.Time{}, err
		}
		return cal.AddOpenDays(now, rule.HoldPickupDays), nil
	})
	if err != nil {
		return nil, nil, err
	}
	if trap != nil {
		// The patron is told in the trap's own transaction: the notice exists
		// exactly when the hold is on the shelf (a copy in transit is told when it
		// is checked in at the pickup branch).
		if trap.Status == holds.StatusWaiting {
			if err := notices.QueueHoldAvailable(tx, trap.HoldID, loc); err != nil {
				return nil, nil, err
			}
		}
		return trap, nil, nil
	}
	status, transit := catalog.StatusAvailable, int64(0)
	var transfer *BranchRef
	if it.HomeBranchID != here {
		status, transit = catalog.StatusInTransit, it.HomeBranchID
		transfer = &BranchRef{ID: it.HomeBranchID, Code: it.HomeBranchCode, Name: it.HomeBranchName}
	}
	return nil, transfer, catalog.SetItemLocation(tx, it.ID, status, here, transit)
}

// checkinBatch returns the checkins of one desk session's list, newest first, in
// one query.
func checkinBatch(tx *db.Tx, batch string, limit int) ([]CheckinResult, error) {
	return queryCheckins(tx, "checkin list", `WHERE c.batch = ? AND c.batch <> '' ORDER BY c.id DESC LIMIT ?`, batch, limit)
}

// checkinSelect reads checkins as CheckinResult; a WHERE clause (on checkins c and
// the loan l it closed) follows it.
const checkinSelect = `SELECT c.id, c.at, i.barcode, r.title, r.author, i.call_number, c.loan_id IS NOT NULL,
			coalesce(l.patron_id, 0), coalesce(lp.first_name || ' ' || lp.surname, ''), coalesce(lp.card, ''), l.due_at,
			c.fine_cents, i.status = 'withdrawn', coalesce(c.transfer_to_id, 0), coalesce(tb.code, ''), coalesce(tb.name, ''),
			coalesce(c.hold_id, 0), c.hold_in_transit, coalesce(hp.first_name || ' ' || hp.surname, ''), coalesce(hp.card, ''),
			coalesce(hb.id, 0), coalesce(hb.code, ''), coalesce(hb.name, ''), h.pickup_by, c.message,
			coalesce(c.received_from_id, 0), coalesce(rb.code, ''), coalesce(rb.name, ''),
			coalesce(c.expired_hold_id, 0), coalesce(xp.first_name || ' ' || xp.surname, ''), coalesce(xp.card, ''), x.pickup_by,
			c.needs_ack = 1 AND c.acked_at IS NULL, coalesce(lp.desk_message, '')
		FROM checkins c
		JOIN items i ON i.id = c.item_id
		JOIN records r ON r.id = i.record_id
		LEFT JOIN loans l ON l.id = c.loan_id
		LEFT JOIN patrons lp ON lp.id = l.patron_id
		LEFT JOIN branches tb ON tb.id = c.transfer_to_id
		LEFT JOIN holds h ON h.id = c.hold_id
		LEFT JOIN patrons hp ON hp.id = h.patron_id
		LEFT JOIN branches hb ON hb.id = h.pickup_branch_id
		LEFT JOIN branches rb ON rb.id = c.received_from_id
		LEFT JOIN holds x ON x.id = c.expired_hold_id
		LEFT JOIN patrons xp ON xp.id = x.patron_id
		`

// queryCheckins runs checkinSelect with the clauses that follow it (where, order
// and limit) and its arguments; what names the list in errors.
func queryCheckins(tx *db.Tx, what, clauses string, args ...any) ([]CheckinResult, error) {
	rows, err := tx.Query(checkinSelect+clauses, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []CheckinResult
	for rows.Next() {
		var c CheckinResult
		var at db.Time
		var due, pickupBy db.NullTime
		var transferID, holdID int64
		var transferCode, transferName string
		var hold holds.Trap
		var from BranchRef
		var expired holds.Expired
		var expiredBy db.NullTime
		if err := rows.Scan(&c.ID, &at, &c.Barcode, &c.Title, &c.Author, &c.CallNumber, &c.WasOnLoan,
			&c.PatronID, &c.PatronName, &c.PatronCard, &due, &c.FineCents, &c.Withdrawn, &transferID, &transferCode, &transferName,
			&holdID, &hold.InTransit, &hold.PatronName, &hold.PatronCard, &hold.PickupBranchID, &hold.PickupBranchCode, &hold.PickupBranchName, &pickupBy, &c.Message,
			&from.ID, &from.Code, &from.Name,
			&expired.HoldID, &expired.PatronName, &expired.PatronCard, &expiredBy,
			&c.Pending, &c.PatronMessage); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		c.At = at.Time
		c.DueAt = due.Time
		c.Overdue = due.Valid && at.After(due.Time)
		if transferID != 0 {
			c.TransferTo = &BranchRef{ID: transferID, Code: transferCode, Name: transferName}
		}
		if from.ID != 0 {
			c.ReceivedFrom = &from
		}
		if holdID != 0 {
			hold.HoldID = holdID
			hold.PickupBy = pickupBy.Time
			c.Hold = &hold
		}
		if expired.HoldID != 0 {
			expired.Status, expired.PickupBy = holds.StatusExpired, expiredBy.Time
			c.ExpiredHold = &expired
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// PatronLoans returns a patron's current loans, soonest due first, in one query.
func PatronLoans(tx *db.Tx, patronID int64) ([]Loan, error) {
	its, err := currentLoanItems(tx, patronID)
	if err != nil {
		return nil, err
	}
	out := make([]Loan, len(its))
	for i, it := range its {
		out[i] = loanOf(it)
	}
	return out, nil
}
