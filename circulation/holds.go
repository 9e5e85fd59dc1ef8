package circulation

import (
	"context"
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
)

// PlaceHold places a hold (see holds.Place) in its own transaction.
func (s *Service) PlaceHold(ctx context.Context, req holds.PlaceRequest) (holds.Placed, error) {
	prefs, err := s.prefs(ctx)
	if err != nil {
		return holds.Placed{}, err
	}
	var placed holds.Placed
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		var err error
		placed, err = holds.Place(tx, req, prefs.Location)
		return err
	})
	return placed, err
}

// HoldOutcome says what happened to the copy of a hold that was closed.
type HoldOutcome struct {
	// Barcode of the copy that was set aside, if any.
	Barcode string
	// Next is the hold the copy now fills, if any.
	Next *holds.Trap
	// TransferTo is set when the copy goes back to its home branch.
	TransferTo *BranchRef
}

// CancelHold cancels a hold with a reason. A copy that was set aside for it goes to
// the next hold it can fill, or back to its shelf, in the same transaction.
func (s *Service) CancelHold(ctx context.Context, actor stacks.Actor, holdID int64, reason string) (HoldOutcome, error) {
	return s.closeHold(ctx, actor, holdID, holds.StatusCancelled, reason)
}

// ExpireHold clears a waiting hold whose pickup time is over; its copy goes to the
// next hold or back to the shelf.
func (s *Service) ExpireHold(ctx context.Context, actor stacks.Actor, holdID int64) (HoldOutcome, error) {
	return s.closeHold(ctx, actor, holdID, holds.StatusExpired, holds.ExpiredReason)
}

func (s *Service) closeHold(ctx context.Context, actor stacks.Actor, holdID int64, status, reason string) (HoldOutcome, error) {
	prefs, err := s.prefs(ctx)
	if err != nil {
		return HoldOutcome{}, err
	}
	var out HoldOutcome
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		out = HoldOutcome{}
		if status == holds.StatusExpired {
			h, err := holds.FindHold(tx, holdID)
			if err != nil {
				return err
			}
			if h.Status != holds.StatusWaiting {
				return stacks.Errorf(stacks.ECONFLICT, "The hold for %s is %s, not waiting on the hold shelf: only a waiting hold can expire. Cancel it instead.",
					h.PatronName, strings.ToLower(holds.StatusLabel(h.Status)))
			}
			if !tx.Now().After(h.PickupBy) {
				return stacks.Errorf(stacks.ECONFLICT, "The hold for %s has not expired: it may be collected until %s.",
					h.PatronName, h.PickupBy.In(prefs.Location).Format("2006-01-02 15:04"))
			}
		}
		freed, err := holds.Close(tx, actor, holdID, status, reason)
		if err != nil || freed == 0 {
			return err
		}
		it, err := catalog.FindItem(tx, freed)
		if err != nil {
			return err
		}
		out.Barcode = it.Barcode
		if it.Status == catalog.StatusInTransit {
			// The copy is on its way to the pickup branch: send it home instead;
			// checking it in where it arrives decides what it does next.
			out.TransferTo = &BranchRef{ID: it.HomeBranchID, Code: it.HomeBranchCode, Name: it.HomeBranchName}
			return catalog.SetItemLocation(tx, it.ID, catalog.StatusInTransit, it.CurrentBranchID, it.HomeBranchID)
		}
		out.Next, out.TransferTo, err = placeItem(tx, actor, it, it.CurrentBranchID, prefs.Location)
		if err != nil {
			return fmt.Errorf("put %s back into circulation: %w", it.Barcode, err)
		}
		return nil
	})
	return out, err
}
