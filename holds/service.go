package holds

import (
	"context"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// Service runs the holds' own transactions: the Holds page and the changes to
// one hold's place in its queue. Closing a hold moves its copy on, so that is
// circulation's (circulation.Service.CancelHold).
type Service struct {
	DB *db.DB
}

// NewService returns a Service on d.
func NewService(d *db.DB) *Service { return &Service{DB: d} }

// BranchHolds is a branch's hold shelf and pull list, and the branches to
// choose another from.
type BranchHolds struct {
	Branches []library.Branch
	Branch   library.Branch
	// Shelf is every waiting hold at the branch, soonest deadline first.
	Shelf []Hold
	Pull  []PullItem
	// Now is the transaction's time, to judge which holds have expired.
	Now time.Time
}

// BranchHolds reads, in one read transaction, the holds of the branch with code
// (ENOTFOUND if none), or, when code is "", of the branch with code home (the
// first branch if there is none such). loc is the library's time zone.
func (s *Service) BranchHolds(ctx context.Context, code, home string, loc *time.Location) (BranchHolds, error) {
	asked := code != ""
	if !asked {
		code = home
	}
	var v BranchHolds
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		v.Now = tx.Now()
		var err error
		if v.Branches, err = library.ListBranches(tx); err != nil {
			return err
		}
		for _, b := range v.Branches {
			if strings.EqualFold(b.Code, code) {
				v.Branch = b
			}
		}
		switch {
		case v.Branch.ID == 0 && asked:
			return stacks.Errorf(stacks.ENOTFOUND, "There is no branch with code %q. Choose a branch on the Holds page.", code)
		case v.Branch.ID == 0 && len(v.Branches) == 0:
			return nil
		case v.Branch.ID == 0:
			v.Branch = v.Branches[0]
		}
		if v.Shelf, err = holdShelf(tx, v.Branch.ID); err != nil {
			return err
		}
		v.Pull, err = pullList(tx, v.Branch.ID, v.Now.In(loc))
		return err
	})
	return v, err
}

// Hold reads one hold.
func (s *Service) Hold(ctx context.Context, id int64) (Hold, error) {
	var h Hold
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		h, err = FindHold(tx, id)
		return err
	})
	return h, err
}

// MoveHold moves a queued hold to place to in its queue (see Move) and returns
// it as it is now.
func (s *Service) MoveHold(ctx context.Context, actor stacks.Actor, id int64, to int) (Hold, error) {
	return s.change(ctx, id, func(tx *db.Tx) error { return Move(tx, actor, id, to) })
}

// SuspendHold suspends a hold until the day until (see Suspend; today is the
// library's date in loc) and returns it as it is now.
func (s *Service) SuspendHold(ctx context.Context, actor stacks.Actor, id int64, until string, loc *time.Location) (Hold, error) {
	return s.change(ctx, id, func(tx *db.Tx) error {
		y, m, d := tx.Now().In(loc).Date()
		return Suspend(tx, actor, id, until, time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
	})
}

// ResumeHold makes a suspended hold active again and returns it as it is now.
func (s *Service) ResumeHold(ctx context.Context, actor stacks.Actor, id int64) (Hold, error) {
	return s.change(ctx, id, func(tx *db.Tx) error { return Resume(tx, actor, id) })
}

// change runs do on hold id and reads the hold back, in one write transaction.
func (s *Service) change(ctx context.Context, id int64, do func(tx *db.Tx) error) (Hold, error) {
	var h Hold
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		if err = do(tx); err != nil {
			return err
		}
		h, err = FindHold(tx, id)
		return err
	})
	return h, err
}
