package holds

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// Warning codes: a hold that staff must confirm.
const (
	WarnAlreadyHolds = "already_holds"
	WarnHasCopy      = "has_copy"
)

// PlaceRequest asks to place a hold for a patron on a record (next available copy)
// or on one item.
type PlaceRequest struct {
	Actor      stacks.Actor
	RecordID   int64
	ItemID     int64 // 0: record-level
	PatronCard string
	// PatronID is used when set; otherwise PatronCard finds the patron.
	PatronID         int64
	PickupBranchCode string
	// Confirm lists the warning codes staff confirmed.
	Confirm []string
}

// Warning is a reason to confirm a hold before placing it.
type Warning struct {
	Code    string
	Message string
}

// WarningError is returned when placing a hold needs confirmation.
type WarningError struct {
	PatronName string
	Warnings   []Warning
}

func (e *WarningError) Error() string {
	msgs := make([]string, len(e.Warnings))
	for i, w := range e.Warnings {
		msgs[i] = w.Message
	}
	return "hold needs confirmation: " + strings.Join(msgs, " ")
}

// Placed is a hold just placed.
type Placed struct {
	HoldID           int64
	Position         int
	PatronID         int64
	PatronName       string
	PatronCard       string
	PickupBranchName string
	Title            string
}

// Place places a hold inside tx, at the end of the record's queue. It refuses an
// expired or blocked patron and one at their category's limit of holds, with the
// reason; it returns a *WarningError when the patron already holds the record or
// has a copy out, unless staff confirmed.
func Place(tx *db.Tx, req PlaceRequest, loc *time.Location) (Placed, error) {
	var (
		p   *patrons.Patron
		err error
	)
	if req.PatronID != 0 {
		p, err = patrons.FindByID(tx, req.PatronID)
	} else {
		p, err = patrons.FindByCard(tx, req.PatronCard)
	}
	if err != nil {
		return Placed{}, err
	}
	now := tx.Now()
	if p.Expired(now.In(loc)) {
		return Placed{}, refuse(RefusedCardExpired, stacks.FieldErrorf("card", stacks.ECONFLICT, "Card %s expired on %s; renew it on the patron page before placing a hold.", p.Card, p.ExpiresOn.Format("2006-01-02")))
	}
	if p.Blocked {
		return Placed{}, refuse(RefusedBlocked, stacks.FieldErrorf("card", stacks.ECONFLICT, "%s is blocked by staff: %s", p.Name(), p.BlockNote))
	}
	pickup, err := library.FindBranchByCode(tx, req.PickupBranchCode)
	if err != nil {
		return Placed{}, stacks.FieldErrorf("pickup", stacks.EINVALID, "Choose a pickup branch.")
	}

	// One query: the record, the item if any, the patron's holds and limit, what
	// they hold and have out of this record.
	var (
		title                            string
		itemRecord                       sql.NullInt64
		notForLoan                       sql.NullBool
		openHolds, maxHolds              int
		holdsOnRecord, copiesOut, queued int
		itemBarcode                      sql.NullString
	)
	err = tx.QueryRow(`SELECT r.title,
			(SELECT record_id FROM items WHERE id = ?2), (SELECT t.not_for_loan FROM items i JOIN item_types t ON t.id = i.item_type_id WHERE i.id = ?2),
			(SELECT barcode FROM items WHERE id = ?2),
			(SELECT count(*) FROM holds WHERE patron_id = ?3 AND status IN ('queued', 'in_transit', 'waiting')),
			(SELECT max_holds FROM patron_categories WHERE id = ?4),
			(SELECT count(*) FROM holds WHERE patron_id = ?3 AND record_id = ?1 AND status IN ('queued', 'in_transit', 'waiting')),
			(SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id WHERE l.patron_id = ?3 AND l.returned_at IS NULL AND i.record_id = ?1),
			(SELECT coalesce(max(priority), 0) FROM holds WHERE record_id = ?1 AND status = 'queued')
		FROM records r WHERE r.id = ?1`, req.RecordID, req.ItemID, p.ID, p.CategoryID).Scan(
		&title, &itemRecord, &notForLoan, &itemBarcode, &openHolds, &maxHolds, &holdsOnRecord, &copiesOut, &queued)
	if errors.Is(err, sql.ErrNoRows) {
		return Placed{}, stacks.Errorf(stacks.ENOTFOUND, "There is no record %d in the catalogue.", req.RecordID)
	} else if err != nil {
		return Placed{}, fmt.Errorf("place hold: %w", err)
	}
	if req.ItemID != 0 {
		if !itemRecord.Valid || itemRecord.Int64 != req.RecordID {
			return Placed{}, stacks.Errorf(stacks.EINVALID, "That item is not a copy of %s.", title)
		}
		if notForLoan.Bool {
			return Placed{}, refuse(RefusedNotForLoan, stacks.Errorf(stacks.ECONFLICT, "Item %s is not for loan, so it cannot be held.", itemBarcode.String))
		}
	}
	if openHolds >= maxHolds {
		return Placed{}, refuse(RefusedHoldLimit, stacks.FieldErrorf("card", stacks.ECONFLICT, "%s already has %d holds; the limit for %s patrons is %d. Cancel one first.", p.Name(), openHolds, p.CategoryName, maxHolds))
	}
	var warnings []Warning
	if holdsOnRecord > 0 {
		warnings = append(warnings, Warning{WarnAlreadyHolds, fmt.Sprintf("%s already has a hold on %s.", p.Name(), title)})
	}
	if copiesOut > 0 {
		warnings = append(warnings, Warning{WarnHasCopy, fmt.Sprintf("%s has a copy of %s checked out now.", p.Name(), title)})
	}
	for _, w := range warnings {
		confirmed := false
		for _, c := range req.Confirm {
			confirmed = confirmed || c == w.Code
		}
		if !confirmed {
			return Placed{}, &WarningError{PatronName: p.Name(), Warnings: warnings}
		}
	}

	var item sql.NullInt64
	if req.ItemID != 0 {
		item = sql.NullInt64{Int64: req.ItemID, Valid: true}
	}
	var staff sql.NullInt64
	if req.Actor.StaffID != 0 {
		staff = sql.NullInt64{Int64: req.Actor.StaffID, Valid: true}
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO holds (record_id, item_id, patron_id, pickup_branch_id, placed_at, priority, status, staff_id)
		VALUES (?, ?, ?, ?, ?, ?, 'queued', ?) RETURNING id`,
		req.RecordID, item, p.ID, pickup.ID, db.FormatTime(now), queued+1, staff).Scan(&id)
	if err != nil {
		return Placed{}, fmt.Errorf("insert hold: %w", err)
	}
	detail := fmt.Sprintf("%s for %s, pickup %s", title, p.Card, pickup.Code)
	if req.ItemID != 0 {
		detail += ", item " + itemBarcode.String
	}
	for _, w := range warnings {
		detail += "; confirmed: " + w.Message
	}
	if err := tx.Audit(req.Actor, "hold.place", "hold", id, detail); err != nil {
		return Placed{}, err
	}
	return Placed{HoldID: id, Position: queued + 1, PatronID: p.ID, PatronName: p.Name(), PatronCard: p.Card,
		PickupBranchName: pickup.Name, Title: title}, nil
}

// Why Place refused a hold (RefusalError.Reason), so that a caller with its own
// audience (the patrons' site) can word each refusal without parsing messages.
const (
	RefusedCardExpired = "card_expired"
	RefusedBlocked     = "blocked"
	RefusedHoldLimit   = "hold_limit"
	RefusedNotForLoan  = "not_for_loan"
)

// RefusalError is a refusal by Place: its reason, and the staff-worded error
// (a *stacks.Error, ECONFLICT) it wraps.
type RefusalError struct {
	Reason string
	Err    error
}

func (e *RefusalError) Error() string { return e.Err.Error() }

// Unwrap returns the staff-worded error.
func (e *RefusalError) Unwrap() error { return e.Err }

func refuse(reason string, err error) error { return &RefusalError{Reason: reason, Err: err} }
