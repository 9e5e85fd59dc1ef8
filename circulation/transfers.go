package circulation

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Transfer is an item travelling between branches: sent home after a checkin away
// from its home branch, or to the pickup branch of the hold it was set aside for.
// Checking it in at its destination ends the transfer.
type Transfer struct {
	// CheckinID is the checkin that sent the item where it is going now: its transit
	// slip. It is 0 when no checkin did (a hold cancelled or expired on the shelf of
	// another branch sends the copy home without one).
	CheckinID  int64
	ItemID     int64
	Barcode    string
	RecordID   int64
	Title      string
	Author     string
	CallNumber string
	From       BranchRef
	To         BranchRef
	// SentAt is when the item left From: the checkin that sent it, else the last
	// change of the item.
	SentAt time.Time
	// Home: the item is going back to its home branch.
	Home bool
	// Hold is the hold the item travels to fill, picked up at To; nil otherwise.
	Hold *TransferHold
}

// TransferHold is the hold an item in transit is set aside for.
type TransferHold struct {
	HoldID     int64
	PatronID   int64
	PatronName string
	PatronCard string
}

// Reason says why the item travels, as the transfer lists and the transit slip
// print it: "Returning home", "Hold for Casey Waiting (P0003) – pickup at
// Westside".
func (t Transfer) Reason() string {
	switch {
	case t.Hold != nil:
		return fmt.Sprintf("Hold for %s (%s) – pickup at %s", t.Hold.PatronName, t.Hold.PatronCard, t.To.Name)
	case t.Home:
		return "Returning home"
	}
	return "Transfer to " + t.To.Name
}

// BranchTransfers are the items in transit to a branch (Incoming) and from it
// (Outgoing), the longest on the way first.
type BranchTransfers struct {
	Incoming []Transfer
	Outgoing []Transfer
}

// listTransfers returns the items in transit to and from the branch, in one query.
// It reads the items themselves (status in transit), so a hold transit and a copy
// sent home by a cancelled hold are listed as well as the transfers of checkins.
func listTransfers(tx *db.Tx, branchID int64) (BranchTransfers, error) {
	ts, err := queryTransits(tx, fmt.Sprintf("transfers of branch %d", branchID),
		`(i.transit_to_id = ?1 OR i.current_branch_id = ?1)`, branchID)
	if err != nil {
		return BranchTransfers{}, err
	}
	var out BranchTransfers
	for _, t := range ts {
		if t.To.ID == branchID {
			out.Incoming = append(out.Incoming, t)
		} else {
			out.Outgoing = append(out.Outgoing, t)
		}
	}
	return out, nil
}

// findItemTransfer returns the transit an item is on now, for the transit slip of
// a copy no checkin sent (a hold cancelled or cleared passed it to the next hold
// at another branch, or sent it home). An item that is not in transit has no
// transit slip (ENOTFOUND).
func findItemTransfer(tx *db.Tx, itemID int64) (Transfer, error) {
	ts, err := queryTransits(tx, fmt.Sprintf("transit of item %d", itemID), `i.id = ?1`, itemID)
	if err != nil {
		return Transfer{}, err
	}
	if len(ts) == 0 {
		return Transfer{}, stacks.Errorf(stacks.ENOTFOUND, "Item %d is not in transit (it has arrived, or was never sent): there is no transit slip to print. Find the item on the Transfers page.", itemID)
	}
	return ts[0], nil
}

// queryTransits reads the items in transit that match where (on items i, with
// its one argument as ?1), the longest on the way first.
func queryTransits(tx *db.Tx, what, where string, arg int64) ([]Transfer, error) {
	// The sending checkin is the item's latest checkin, if that one was at the
	// branch the item left and sent it somewhere; it is the slip only if it sent it
	// where it is going now. (The holds join repeats the trapped statuses of the
	// holds_trapped_item index, so that SQLite uses it.)
	rows, err := tx.Query(`SELECT
			CASE WHEN c.transfer_to_id = i.transit_to_id OR (c.hold_in_transit = 1 AND c.hold_id = h.id) THEN c.id ELSE 0 END,
			i.id, i.barcode, i.record_id, r.title, r.author, i.call_number,
			fb.id, fb.code, fb.name, tb.id, tb.code, tb.name, coalesce(c.at, i.updated_at), i.transit_to_id = i.home_branch_id,
			coalesce(h.id, 0), coalesce(h.patron_id, 0), coalesce(p.first_name || ' ' || p.surname, ''), coalesce(p.card, '')
		FROM items i
		JOIN records r ON r.id = i.record_id
		JOIN branches fb ON fb.id = i.current_branch_id
		JOIN branches tb ON tb.id = i.transit_to_id
		LEFT JOIN holds h ON h.trapped_item_id = i.id AND h.status IN ('in_transit', 'waiting') AND h.status = 'in_transit'
		LEFT JOIN patrons p ON p.id = h.patron_id
		LEFT JOIN checkins c ON c.id = (SELECT max(l.id) FROM checkins l WHERE l.item_id = i.id)
			AND c.branch_id = i.current_branch_id AND (c.transfer_to_id IS NOT NULL OR c.hold_in_transit = 1)
		WHERE i.status = 'in_transit' AND `+where+`
		ORDER BY coalesce(c.at, i.updated_at), i.barcode`, arg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []Transfer
	for rows.Next() {
		var t Transfer
		var sent db.Time
		var hold TransferHold
		if err := rows.Scan(&t.CheckinID, &t.ItemID, &t.Barcode, &t.RecordID, &t.Title, &t.Author, &t.CallNumber,
			&t.From.ID, &t.From.Code, &t.From.Name, &t.To.ID, &t.To.Code, &t.To.Name, &sent, &t.Home,
			&hold.HoldID, &hold.PatronID, &hold.PatronName, &hold.PatronCard); err != nil {
			return nil, err
		}
		t.SentAt = sent.Time
		if hold.HoldID != 0 {
			t.Hold = &hold
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// findTransfer returns the transfer a checkin started, for its transit slip: where
// the item went, from where, when, and for which hold. It describes the checkin, even
// after the item has arrived. A checkin that sent the item nowhere has no transfer
// (ENOTFOUND).
func findTransfer(tx *db.Tx, checkinID int64) (Transfer, error) {
	t := Transfer{CheckinID: checkinID}
	var sent db.Time
	var toID sql.NullInt64
	var hold TransferHold
	err := tx.QueryRow(`SELECT i.id, i.barcode, i.record_id, r.title, r.author, i.call_number,
			fb.id, fb.code, fb.name, tb.id, coalesce(tb.code, ''), coalesce(tb.name, ''), c.at, coalesce(tb.id = i.home_branch_id, FALSE),
			coalesce(h.id, 0), coalesce(h.patron_id, 0), coalesce(p.first_name || ' ' || p.surname, ''), coalesce(p.card, '')
		FROM checkins c
		JOIN items i ON i.id = c.item_id
		JOIN records r ON r.id = i.record_id
		JOIN branches fb ON fb.id = c.branch_id
		LEFT JOIN holds h ON h.id = c.hold_id AND c.hold_in_transit = 1
		LEFT JOIN patrons p ON p.id = h.patron_id
		LEFT JOIN branches tb ON tb.id = coalesce(c.transfer_to_id, h.pickup_branch_id)
		WHERE c.id = ?`, checkinID).Scan(&t.ItemID, &t.Barcode, &t.RecordID, &t.Title, &t.Author, &t.CallNumber,
		&t.From.ID, &t.From.Code, &t.From.Name, &toID, &t.To.Code, &t.To.Name, &sent, &t.Home,
		&hold.HoldID, &hold.PatronID, &hold.PatronName, &hold.PatronCard)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Transfer{}, stacks.Errorf(stacks.ENOTFOUND, "There is no checkin %d, so there is no transit slip to print. Find the item on the Transfers page.", checkinID)
	case err != nil:
		return Transfer{}, fmt.Errorf("transfer of checkin %d: %w", checkinID, err)
	case !toID.Valid:
		return Transfer{}, stacks.Errorf(stacks.ENOTFOUND, "Checkin %d of %s (%s) sent it nowhere: it stayed at %s, so there is no transit slip to print.",
			checkinID, t.Barcode, t.Title, t.From.Name)
	}
	t.To.ID, t.SentAt = toID.Int64, sent.Time
	if hold.HoldID != 0 {
		t.Hold = &hold
	}
	return t, nil
}
