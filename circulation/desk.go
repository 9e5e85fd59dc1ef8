package circulation

import (
	"context"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// DeskPatron is the patron a desk serves, as the Check out page shows them.
type DeskPatron struct {
	Patron   *patrons.Patron
	Standing patrons.StandingSummary
	// Loans are the patron's current loans, soonest due first.
	Loans []Loan
}

// DeskPatron reads the patron with their standing and current loans, in one
// read transaction.
func (s *Service) DeskPatron(ctx context.Context, patronID int64) (DeskPatron, error) {
	var out DeskPatron
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		var err error
		if out.Patron, out.Standing, err = patrons.FindWithStanding(tx, patronID); err != nil {
			return err
		}
		out.Loans, err = PatronLoans(tx, out.Patron.ID)
		return err
	})
	return out, err
}

// IdentifyAtDesk finds the patron a desk's card field or scan names (a card, or
// a name matching up to limit patrons). When it names no card but is an item's
// barcode (scanned before the patron's card), that item comes back with what the
// name search found: a barcode can be part of a card or of a phone number, and
// must not open that patron's visit.
func (s *Service) IdentifyAtDesk(ctx context.Context, input string, limit int) (patrons.Identified, *catalog.Item, error) {
	var id patrons.Identified
	var item *catalog.Item
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		var err error
		id, err = patrons.Identify(tx, input, limit)
		if id.ByCard || (err != nil && stacks.ErrorCode(err) != stacks.ENOTFOUND) {
			return err
		}
		if bc, berr := catalog.NormalizeBarcode(input); berr == nil {
			it, ierr := catalog.FindItemByBarcode(tx, bc)
			if ierr == nil {
				item, err = it, nil
			} else if stacks.ErrorCode(ierr) != stacks.ENOTFOUND {
				return ierr
			}
		}
		return err
	})
	return id, item, err
}

// PatronByCard finds the patron whose card a desk scan may be (ENOTFOUND if
// none): a scan that is no item's barcode.
func (s *Service) PatronByCard(ctx context.Context, card string) (*patrons.Patron, error) {
	var p *patrons.Patron
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		var err error
		p, err = patrons.FindByCard(tx, card)
		return err
	})
	return p, err
}

// RenewCard renews the patron's card at the desk, from today in loc (the
// library's time zone), and returns the patron as renewed and the new expiry.
func (s *Service) RenewCard(ctx context.Context, actor stacks.Actor, patronID int64, loc *time.Location) (*patrons.Patron, time.Time, error) {
	var p *patrons.Patron
	var until time.Time
	err := s.DB.Write(ctx, func(tx *db.Tx) error {
		var err error
		if until, err = patrons.RenewCard(tx, actor, patronID, localDate(tx.Now(), loc)); err != nil {
			return err
		}
		p, err = patrons.FindByID(tx, patronID)
		return err
	})
	return p, until, err
}

// localDate is the calendar date at now in loc, as midnight UTC of that date:
// the form patrons takes a day in.
func localDate(now time.Time, loc *time.Location) time.Time {
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// DismissDeskMessage dismisses the message staff left on the patron for the
// desk: read to the patron, it is not shown again.
func (s *Service) DismissDeskMessage(ctx context.Context, actor stacks.Actor, patronID int64) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		return patrons.DismissDeskMessage(tx, actor, patronID)
	})
}

// CheckinList reads a desk's Check in list in one read transaction: its latest
// returns (at most limit, newest first) and those staff must still act on.
func (s *Service) CheckinList(ctx context.Context, batch string, limit int) (list, pending []CheckinResult, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		var err error
		if list, err = checkinBatch(tx, batch, limit); err != nil {
			return err
		}
		pending, err = checkinsToAcknowledge(tx, batch)
		return err
	})
	return list, pending, err
}

// CheckinsToAcknowledge reads the returns of a desk's list that staff must still
// act on, newest first.
func (s *Service) CheckinsToAcknowledge(ctx context.Context, batch string) ([]CheckinResult, error) {
	var out []CheckinResult
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		out, err = checkinsToAcknowledge(tx, batch)
		return err
	})
	return out, err
}

// BranchCounts is how a branch stands: its copies on loan and overdue, the holds
// waiting on its shelf and queued for pickup there.
type BranchCounts struct {
	OnLoan       int
	Overdue      int
	HoldsWaiting int
	HoldsQueued  int
}

// BranchCounts counts, in one statement, how the branch stands now.
func (s *Service) BranchCounts(ctx context.Context, branchID int64) (BranchCounts, error) {
	var c BranchCounts
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT
			(SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id
				WHERE l.returned_at IS NULL AND i.home_branch_id = ?1),
			(SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id
				WHERE l.returned_at IS NULL AND i.home_branch_id = ?1 AND l.due_at < ?2),
			(SELECT count(*) FROM holds WHERE status = 'waiting' AND pickup_branch_id = ?1),
			(SELECT count(*) FROM holds WHERE status = 'queued' AND pickup_branch_id = ?1)`,
			branchID, db.FormatTime(tx.Now())).Scan(&c.OnLoan, &c.Overdue, &c.HoldsWaiting, &c.HoldsQueued)
	})
	return c, err
}
