package circulation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/notices"
	"github.com/stacks-ils/stacks/patrons"
)

// The pages about one patron read from patrons, loans, holds and notices at
// once, in one transaction: they are composed here, where those domains meet.

// PatronPage is what the staff's patron page shows.
type PatronPage struct {
	Patron   *patrons.Patron
	Standing patrons.StandingSummary
	// Now is the database's time of the read.
	Now time.Time
	// Ledger is the fines ledger, newest first.
	Ledger []patrons.LedgerEntry
	// Open are the charges still owed on, oldest first; read only when the
	// patron owes.
	Open        []patrons.OpenCharge
	ChargeTypes []patrons.ChargeType
	Loans       []Loan
	Holds       []holds.Hold
	// Branches are where holds can be picked up.
	Branches []library.Branch
	Notices  notices.PatronNotices
}

// PatronPage reads the staff's patron page in one read transaction: seven
// statements (the patron with their standing and claims returned, ledger,
// charge types, loans, holds, branches, and the latest noticesShown notices
// with the patron's choices) and one more for the open lines when the patron
// owes.
func (s *Service) PatronPage(ctx context.Context, id int64, noticesShown int) (v PatronPage, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if v.Patron, v.Standing, err = patrons.FindWithStanding(tx, id); err != nil {
			return err
		}
		v.Now = tx.Now()
		if v.Ledger, err = patrons.Ledger(tx, id); err != nil {
			return err
		}
		if v.Standing.BalanceCents > 0 {
			if v.Open, _, err = patrons.OpenCharges(tx, id); err != nil {
				return err
			}
		}
		if v.ChargeTypes, err = patrons.ChargeTypes(tx); err != nil {
			return err
		}
		if v.Loans, err = PatronLoans(tx, id); err != nil {
			return err
		}
		if v.Holds, err = holds.PatronHolds(tx, id); err != nil {
			return err
		}
		if v.Branches, err = library.ListBranches(tx); err != nil {
			return err
		}
		v.Notices, err = notices.FindPatronNotices(tx, id, v.Patron.Email, noticesShown)
		return err
	})
	if err != nil {
		return PatronPage{}, err
	}
	return v, nil
}

// SetPatronNoticeChoices saves how the patron wants each kind of notice
// (trigger to delivery), checked against their e-mail address, and returns the
// patron.
func (s *Service) SetPatronNoticeChoices(ctx context.Context, actor stacks.Actor, id int64, choices map[string]string) (p *patrons.Patron, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		if p, err = patrons.FindByID(tx, id); err != nil {
			return err
		}
		return notices.SetPatronPreferences(tx, actor, id, p.Email, choices)
	})
	return p, err
}

// Claims is a page of the claims-returned list, with the branches to filter by.
type Claims struct {
	Branches []library.Branch
	Claims   []ClaimedLoan
	More     bool
}

// ClaimsReturned reads a page of the claims returned in one read transaction;
// branchCode, if set, keeps the loans issued at that branch (ENOTFOUND if there
// is no such branch) and overrides f.BranchID.
func (s *Service) ClaimsReturned(ctx context.Context, branchCode string, f ClaimsFilter) (c Claims, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		bs, err := library.ListBranches(tx)
		if err != nil {
			return err
		}
		c.Branches = bs
		f.BranchID = 0
		for _, b := range bs {
			if b.Code == branchCode {
				f.BranchID = b.ID
			}
		}
		if branchCode != "" && f.BranchID == 0 {
			return stacks.Errorf(stacks.ENOTFOUND, "There is no branch %q; choose one from the list.", branchCode)
		}
		c.Claims, c.More, err = ClaimedReturned(tx, f)
		return err
	})
	return c, err
}

// Account is what My account shows a patron.
type Account struct {
	// Now is the database's time of the read.
	Now          time.Time
	Loans        []Loan
	Holds        []holds.Hold
	BalanceCents int64
	// Branches are where holds can be picked up.
	Branches []library.Branch
}

// Account reads the patron's My account page in one read transaction: loans,
// holds, balance and the pickup branches.
func (s *Service) Account(ctx context.Context, patronID int64) (a Account, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		a.Now = tx.Now()
		if a.Loans, err = PatronLoans(tx, patronID); err != nil {
			return err
		}
		if a.Holds, err = holds.PatronHolds(tx, patronID); err != nil {
			return err
		}
		if a.BalanceCents, err = patrons.Balance(tx, patronID); err != nil {
			return err
		}
		a.Branches, err = library.ListBranches(tx)
		return err
	})
	return a, err
}

// PauseHold suspends a hold until the day until, after today in loc (see
// holds.Suspend), for the patron's own account.
func (s *Service) PauseHold(ctx context.Context, actor stacks.Actor, holdID int64, until string, loc *time.Location) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		return holds.Suspend(tx, actor, holdID, until, tx.Now().In(loc))
	})
}

// ResumeHold makes a suspended hold active again (see holds.Resume).
func (s *Service) ResumeHold(ctx context.Context, actor stacks.Actor, holdID int64) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return holds.Resume(tx, actor, holdID) })
}

// ChangePickup moves a hold's pickup to the branch with code, and returns that
// branch's name.
func (s *Service) ChangePickup(ctx context.Context, actor stacks.Actor, holdID int64, code string) (name string, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		if err := holds.ChangePickup(tx, actor, holdID, code); err != nil {
			return err
		}
		b, err := library.FindBranchByCode(tx, code)
		name = b.Name
		return err
	})
	return name, err
}

// HoldForm is what the patron's Place a hold form shows.
type HoldForm struct {
	Title, Author string
	Branches      []library.Branch
}

// HoldForm reads the record's title and the pickup branches for the patron's
// Place a hold form: ENOTFOUND if there is no record recordID.
func (s *Service) HoldForm(ctx context.Context, recordID int64) (f HoldForm, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		err := tx.QueryRow(`SELECT title, author FROM records WHERE id = ?`, recordID).Scan(&f.Title, &f.Author)
		if errors.Is(err, sql.ErrNoRows) {
			return stacks.Errorf(stacks.ENOTFOUND, "The catalogue has no record %d. Search for the title instead.", recordID)
		} else if err != nil {
			return fmt.Errorf("read record %d for the hold form: %w", recordID, err)
		}
		f.Branches, err = library.ListBranches(tx)
		return err
	})
	return f, err
}
