// Package holds owns holds: the queue of patrons waiting for a title or a copy,
// trapping a returned copy for the next of them, and the hold shelf. Circulation
// calls it inside its own transactions, so a checkin that fills a hold commits both.
package holds

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// Hold statuses. Queued, in transit and waiting holds are open.
const (
	StatusQueued    = "queued"
	StatusInTransit = "in_transit"
	StatusWaiting   = "waiting"
	StatusFulfilled = "fulfilled"
	StatusCancelled = "cancelled"
	StatusExpired   = "expired"
)

// Ref names a hold and its patron, for messages.
type Ref struct {
	HoldID     int64
	PatronID   int64
	PatronName string
	PatronCard string
	Status     string
	// ItemID is set for an item-level hold.
	ItemID int64
}

// CheckoutCheck is what the holds say about lending one item to one patron.
type CheckoutCheck struct {
	// Trapped is the hold the item is set aside for (waiting or in transit), if any.
	Trapped *Ref
	// Queued is the first queued hold of another patron that this item could fill,
	// if it comes before the borrower's own hold on the record.
	Queued *Ref
	// Own is the borrowing patron's own open hold on this record (or this item),
	// which the checkout fills.
	Own *Ref
}

// CheckAtCheckout reports the holds bearing on lending item to patronID, in one query.
func CheckAtCheckout(tx *db.Tx, item *catalog.Item, patronID int64, today time.Time) (CheckoutCheck, error) {
	rows, err := tx.Query(`SELECT h.id, h.patron_id, p.first_name || ' ' || p.surname, p.card, h.status,
			coalesce(h.item_id, 0), coalesce(h.trapped_item_id, 0), coalesce(h.suspended_until, '')
		FROM holds h JOIN patrons p ON p.id = h.patron_id
		WHERE h.record_id = ? AND h.status IN ('queued', 'in_transit', 'waiting')
		ORDER BY h.priority, h.id`, item.RecordID)
	if err != nil {
		return CheckoutCheck{}, fmt.Errorf("holds at checkout: %w", err)
	}
	defer rows.Close()
	var c CheckoutCheck
	day := today.Format(db.DayFormat)
	for rows.Next() {
		var r Ref
		var trappedItem int64
		var suspended string
		if err := rows.Scan(&r.HoldID, &r.PatronID, &r.PatronName, &r.PatronCard, &r.Status, &r.ItemID, &trappedItem, &suspended); err != nil {
			return CheckoutCheck{}, err
		}
		switch {
		case r.Status != StatusQueued && trappedItem == item.ID:
			c.Trapped = &r
		case r.PatronID == patronID:
			// The patron's own hold on this title is filled by borrowing a copy, unless
			// it asks for another copy or another copy is already set aside for it.
			if c.Own == nil && r.Status == StatusQueued && (r.ItemID == 0 || r.ItemID == item.ID) {
				c.Own = &r
			}
		case r.Status == StatusQueued && c.Queued == nil && (r.ItemID == item.ID || (r.ItemID == 0 && c.Own == nil)) && (suspended == "" || suspended <= day):
			// A record-level hold stands in the way only ahead of the borrower's own;
			// another patron's hold on this very copy always does (as at trapping).
			c.Queued = &r
		}
	}
	return c, rows.Err()
}

// Fill marks a hold fulfilled by a checkout and closes the gap in its queue.
func Fill(tx *db.Tx, actor stacks.Actor, holdID int64) error {
	var recordID int64
	var priority int
	err := tx.QueryRow(`UPDATE holds SET status = 'fulfilled', closed_at = ?, trapped_item_id = NULL
		WHERE id = ? AND status IN ('queued', 'in_transit', 'waiting') RETURNING record_id, priority`,
		db.FormatTime(tx.Now()), holdID).Scan(&recordID, &priority)
	if errors.Is(err, sql.ErrNoRows) {
		return stacks.Errorf(stacks.ECONFLICT, "Hold %d is no longer open.", holdID)
	} else if err != nil {
		return fmt.Errorf("fill hold %d: %w", holdID, err)
	}
	if err := closeGap(tx, recordID, priority); err != nil {
		return err
	}
	return tx.Audit(actor, "hold.fill", "hold", holdID, "")
}

// closeGap moves up the queued holds behind a hold that left the queue.
func closeGap(tx *db.Tx, recordID int64, priority int) error {
	if priority <= 0 {
		return nil
	}
	_, err := tx.Exec(`UPDATE holds SET priority = priority - 1
		WHERE record_id = ? AND status = 'queued' AND priority > ?`, recordID, priority)
	if err != nil {
		return fmt.Errorf("renumber hold queue: %w", err)
	}
	return nil
}

// Release puts a trapped hold back at the head of its queue: its copy went to
// another patron by staff override, so the next copy returned will serve it.
func Release(tx *db.Tx, actor stacks.Actor, holdID int64, reason string) error {
	var recordID int64
	err := tx.QueryRow(`SELECT record_id FROM holds WHERE id = ? AND status IN ('in_transit', 'waiting')`, holdID).Scan(&recordID)
	if errors.Is(err, sql.ErrNoRows) {
		return stacks.Errorf(stacks.ECONFLICT, "Hold %d is not set aside for anyone.", holdID)
	} else if err != nil {
		return fmt.Errorf("release hold %d: %w", holdID, err)
	}
	if _, err := tx.Exec(`UPDATE holds SET priority = priority + 1 WHERE record_id = ? AND status = 'queued'`, recordID); err != nil {
		return fmt.Errorf("release hold %d: %w", holdID, err)
	}
	if _, err := tx.Exec(`UPDATE holds SET status = 'queued', priority = 1, trapped_item_id = NULL, waiting_since = NULL, pickup_by = NULL
		WHERE id = ?`, holdID); err != nil {
		return fmt.Errorf("release hold %d: %w", holdID, err)
	}
	return tx.Audit(actor, "hold.release", "hold", holdID, reason)
}

// RenewalBlocked reports whether holds stop a loan of item from being renewed: an
// item-level hold on this copy, or more queued holds on the title than other
// copies on the shelf can fill. One query.
func RenewalBlocked(tx *db.Tx, item *catalog.Item, today time.Time) (bool, error) {
	var itemHolds, titleHolds, otherCopies int
	day := today.Format(db.DayFormat)
	err := tx.QueryRow(`SELECT
		(SELECT count(*) FROM holds WHERE record_id = ?1 AND item_id = ?2 AND status = 'queued'
			AND (suspended_until IS NULL OR suspended_until <= ?3)),
		(SELECT count(*) FROM holds WHERE record_id = ?1 AND item_id IS NULL AND status = 'queued'
			AND (suspended_until IS NULL OR suspended_until <= ?3)),
		(SELECT count(*) FROM items i JOIN item_types t ON t.id = i.item_type_id
			WHERE i.record_id = ?1 AND i.id <> ?2 AND i.status = 'available' AND t.not_for_loan = 0)`,
		item.RecordID, item.ID, day).Scan(&itemHolds, &titleHolds, &otherCopies)
	if err != nil {
		return false, fmt.Errorf("holds at renewal: %w", err)
	}
	return itemHolds > 0 || titleHolds > otherCopies, nil
}

// ExpiredReason is the reason recorded on a waiting hold that was not collected by
// its pickup time, whether staff clear it from the Holds page or its copy is
// checked in.
const ExpiredReason = "not collected in time"

// Expired is a waiting hold that ended because its pickup time was over.
type Expired struct {
	Ref
	// PickupBy is the pickup time that passed.
	PickupBy time.Time
}

// ExpireAtCheckin ends, as expired, the waiting hold that the copy itemID is set
// aside for when its pickup time is over (tx.Now() after pickup_by, as on the Holds
// page), inside the checkin's transaction, so that trapping then passes the copy to
// the next hold or the shelf. It returns nil when the copy is set aside for no
// waiting hold, or for one that may still be collected.
func ExpireAtCheckin(tx *db.Tx, actor stacks.Actor, itemID int64) (*Expired, error) {
	var e Expired
	var by db.NullTime
	err := tx.QueryRow(`SELECT h.id, h.patron_id, p.first_name || ' ' || p.surname, p.card, coalesce(h.item_id, 0), h.pickup_by
		FROM holds h JOIN patrons p ON p.id = h.patron_id
		WHERE h.trapped_item_id = ? AND h.status = 'waiting'`, itemID).Scan(
		&e.HoldID, &e.PatronID, &e.PatronName, &e.PatronCard, &e.ItemID, &by)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("find expired hold: %w", err)
	}
	if !by.Valid || !tx.Now().After(by.Time) {
		return nil, nil
	}
	if _, err := Close(tx, actor, e.HoldID, StatusExpired, ExpiredReason); err != nil {
		return nil, err
	}
	e.Status, e.PickupBy = StatusExpired, by.Time
	return &e, nil
}

// Trap is a hold that a returned copy was set aside for.
type Trap struct {
	Ref
	PickupBranchID   int64
	PickupBranchCode string
	PickupBranchName string
	// InTransit: the copy must travel to the pickup branch first.
	InTransit bool
	// PickupBy is the deadline for collecting a waiting hold.
	PickupBy time.Time
}

// PickupDeadline computes when a hold trapped now must be collected by: the
// circulation rule's pickup days at the pickup branch, counted in open days. The
// caller (circulation, which owns the rules and calendar) supplies it.
type PickupDeadline func(pickupBranchID, patronCategoryID int64) (time.Time, error)

// TrapAtCheckin decides, inside the checkin's transaction, whether the copy just
// checked in at branchID fills a hold: a hold it is already set aside for, else the
// first item-level hold on this copy, else the first record-level hold, skipping
// suspended holds. A trapped copy goes on the hold shelf here, or into transit to the
// pickup branch; TrapAtCheckin sets the item's location in that case. It returns nil
// when no hold wants the copy.
func TrapAtCheckin(tx *db.Tx, actor stacks.Actor, item *catalog.Item, branchID int64, today time.Time, deadline PickupDeadline) (*Trap, error) {
	if item.NotForLoan {
		return nil, nil
	}
	var t Trap
	var trappedItem, categoryID int64
	var priority int
	err := tx.QueryRow(`SELECT h.id, h.patron_id, p.first_name || ' ' || p.surname, p.card, h.status, coalesce(h.item_id, 0),
			coalesce(h.trapped_item_id, 0), h.pickup_branch_id, b.code, b.name, p.category_id, h.priority
		FROM holds h
		JOIN patrons p ON p.id = h.patron_id
		JOIN branches b ON b.id = h.pickup_branch_id
		WHERE h.record_id = ?1 AND (
			(h.trapped_item_id = ?2 AND h.status IN ('in_transit', 'waiting'))
			OR (h.status = 'queued' AND (h.item_id IS NULL OR h.item_id = ?2)
				AND (h.suspended_until IS NULL OR h.suspended_until <= ?3)))
		ORDER BY CASE WHEN h.trapped_item_id = ?2 THEN 0 WHEN h.item_id = ?2 THEN 1 ELSE 2 END, h.priority, h.id
		LIMIT 1`, item.RecordID, item.ID, today.Format(db.DayFormat)).Scan(
		&t.HoldID, &t.PatronID, &t.PatronName, &t.PatronCard, &t.Status, &t.ItemID,
		&trappedItem, &t.PickupBranchID, &t.PickupBranchCode, &t.PickupBranchName, &categoryID, &priority)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("find hold to trap: %w", err)
	}
	now := db.FormatTime(tx.Now())
	here := t.PickupBranchID == branchID
	t.InTransit = !here

	switch {
	case trappedItem == item.ID && t.Status == StatusWaiting && here:
		// Scanned again on the hold shelf: nothing changes.
	case here:
		by, err := deadline(t.PickupBranchID, categoryID)
		if err != nil {
			return nil, err
		}
		t.PickupBy = by
		if _, err := tx.Exec(`UPDATE holds SET status = 'waiting', priority = 0, trapped_item_id = ?, waiting_since = ?, pickup_by = ?
			WHERE id = ?`, item.ID, now, db.FormatTime(by), t.HoldID); err != nil {
			return nil, fmt.Errorf("trap hold %d: %w", t.HoldID, err)
		}
	default:
		if _, err := tx.Exec(`UPDATE holds SET status = 'in_transit', priority = 0, trapped_item_id = ?, waiting_since = NULL, pickup_by = NULL
			WHERE id = ?`, item.ID, t.HoldID); err != nil {
			return nil, fmt.Errorf("trap hold %d: %w", t.HoldID, err)
		}
	}
	if t.Status == StatusQueued {
		if err := closeGap(tx, item.RecordID, priority); err != nil {
			return nil, err
		}
	}
	if here {
		t.Status = StatusWaiting
		err = catalog.SetItemLocation(tx, item.ID, catalog.StatusOnHoldShelf, branchID, 0)
	} else {
		t.Status = StatusInTransit
		err = catalog.SetItemLocation(tx, item.ID, catalog.StatusInTransit, branchID, t.PickupBranchID)
	}
	if err != nil {
		return nil, err
	}
	if trappedItem != item.ID {
		if err := tx.Audit(actor, "hold.trap", "hold", t.HoldID, fmt.Sprintf("item %s for %s, pickup at %s", item.Barcode, t.PatronCard, t.PickupBranchCode)); err != nil {
			return nil, err
		}
	}
	return &t, nil
}
