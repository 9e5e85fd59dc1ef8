package circulation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// CheckinWithItem is Checkin for a self-check machine or an automated sorter (SIP2):
// the same checkin, with the same rules, in the same transaction, followed by one read
// of the item as it now stands, whose home branch the sorter reports as the item's
// permanent location.
func (s *Service) CheckinWithItem(ctx context.Context, req CheckinRequest) (CheckinResult, *catalog.Item, error) {
	barcode, prefs, err := s.prepare(ctx, req.Actor, req.Barcode)
	if err != nil {
		return CheckinResult{}, nil, err
	}
	var (
		res  CheckinResult
		item *catalog.Item
	)
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		res = CheckinResult{}
		if err := s.checkin(tx, req, barcode, prefs.Location, &res); err != nil {
			return err
		}
		item, err = catalog.FindItemByBarcode(tx, res.Barcode)
		return err
	})
	if err != nil {
		return CheckinResult{}, nil, err
	}
	return res, item, nil
}

// ItemState is an item as a self-check machine asks about it (SIP2 item information):
// where it belongs and where it is, its current loan, and the holds it could fill.
type ItemState struct {
	catalog.Item
	CurrentBranchCode string
	// OnLoan is set, with the due time and the borrower, for a checked-out item.
	OnLoan   bool
	DueAt    time.Time
	PatronID int64
	// HoldQueue counts the open holds this copy could fill: on its title, or on it.
	HoldQueue int
	// PickupBy is when the hold expires, for a copy waiting on the hold shelf.
	PickupBy time.Time
}

// FindItemState reads the item with barcode, its loan and its holds, in one query.
func FindItemState(tx *db.Tx, barcode string) (ItemState, error) {
	barcode, err := catalog.NormalizeBarcode(barcode)
	if err != nil {
		return ItemState{}, err
	}
	var st ItemState
	var due, pickupBy db.NullTime
	dest := append(st.ItemScanDest(), &st.CurrentBranchCode, &st.PatronID, &due, &st.HoldQueue, &pickupBy)
	err = tx.QueryRow(`SELECT `+catalog.ItemColumns+`, cb.code, coalesce(l.patron_id, 0), l.due_at,
			(SELECT count(*) FROM holds h WHERE h.record_id = i.record_id
				AND h.status IN ('queued', 'in_transit', 'waiting') AND (h.item_id IS NULL OR h.item_id = i.id)),
			(SELECT h.pickup_by FROM holds h WHERE h.trapped_item_id = i.id AND h.status = 'waiting')`+catalog.ItemFrom+`
		JOIN branches cb ON cb.id = i.current_branch_id
		LEFT JOIN loans l ON l.item_id = i.id AND l.returned_at IS NULL
		WHERE i.barcode = ?`, barcode).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return ItemState{}, catalog.ErrUnknownBarcode(barcode)
	} else if err != nil {
		return ItemState{}, fmt.Errorf("find item %q: %w", barcode, err)
	}
	st.OnLoan, st.DueAt, st.PickupBy = st.PatronID != 0, due.Time, pickupBy.Time
	return st, nil
}
