package circulation

import (
	"context"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// DefaultHeavyReadTimeout bounds a history read when the service was given no
// timeout (WithHeavyReadTimeout).
const DefaultHeavyReadTimeout = 20 * time.Second

// WithHeavyReadTimeout sets how long a read whose cost staff choose (a history)
// may run before it is stopped, and returns s.
func (s *Service) WithHeavyReadTimeout(d time.Duration) *Service {
	s.heavyReadTimeout = d
	return s
}

// ErrHistoryTooLong is a history read stopped at the heavy-read timeout.
var ErrHistoryTooLong = stacks.Errorf(stacks.EINVALID, "The history took too long to read and was stopped: try again in a moment.")

// readHistory runs fn as a heavy read (db.ReadBounded): it returns
// db.ErrHeavyBusy when every heavy-read slot stayed taken, ErrHistoryTooLong
// past the timeout.
func (s *Service) readHistory(ctx context.Context, fn func(tx *db.Tx) error) error {
	timeout := s.heavyReadTimeout
	if timeout <= 0 {
		timeout = DefaultHeavyReadTimeout
	}
	return s.DB.ReadBounded(ctx, timeout, ErrHistoryTooLong, fn)
}

// ItemLoanHistory reads an item and its loans, newest first, at most limit of
// them, as a heavy read (readHistory).
func (s *Service) ItemLoanHistory(ctx context.Context, itemID int64, limit int) (*catalog.ItemDetails, History, error) {
	return loanHistory(ctx, s, catalog.FindItemDetails, ItemHistory, itemID, limit)
}

// PatronLoanHistory reads a patron and their loans, newest first, at most limit
// of them, as a heavy read (readHistory).
func (s *Service) PatronLoanHistory(ctx context.Context, patronID int64, limit int) (*patrons.Patron, History, error) {
	return loanHistory(ctx, s, patrons.FindByID, PatronHistory, patronID, limit)
}

// loanHistory reads what find finds for id (an item, a patron) and its
// history, in one heavy read.
func loanHistory[T any](ctx context.Context, s *Service, find func(*db.Tx, int64) (T, error),
	history func(*db.Tx, int64, int) (History, error), id int64, limit int) (T, History, error) {
	var found T
	var h History
	err := s.readHistory(ctx, func(tx *db.Tx) (err error) {
		if found, err = find(tx, id); err != nil {
			return err
		}
		h, err = history(tx, id, limit)
		return err
	})
	return found, h, err
}

// Transfers reads the items in transit to and from the branch.
func (s *Service) Transfers(ctx context.Context, branchID int64) (BranchTransfers, error) {
	return readByID(ctx, s.DB, listTransfers, branchID)
}

// TransferSlip reads the transfer a checkin started, for its transit slip.
func (s *Service) TransferSlip(ctx context.Context, checkinID int64) (Transfer, error) {
	return readByID(ctx, s.DB, findTransfer, checkinID)
}

// ItemTransferSlip reads the transit an item is on now, for the slip of a copy
// no checkin sent.
func (s *Service) ItemTransferSlip(ctx context.Context, itemID int64) (Transfer, error) {
	return readByID(ctx, s.DB, findItemTransfer, itemID)
}

// readByID returns what read reads for id, in one read transaction.
func readByID[T any](ctx context.Context, d *db.DB, read func(*db.Tx, int64) (T, error), id int64) (T, error) {
	var v T
	err := d.Read(ctx, func(tx *db.Tx) (err error) {
		v, err = read(tx, id)
		return err
	})
	return v, err
}

// RuleScopes are what a rule's scope may name: the patron categories, the item
// types and the branches.
type RuleScopes struct {
	Categories []library.Named
	ItemTypes  []library.Named
	Branches   []library.Branch
}

func readRuleScopes(tx *db.Tx) (RuleScopes, error) {
	var sc RuleScopes
	var err error
	if sc.Categories, sc.ItemTypes, err = library.ListScopes(tx); err != nil {
		return sc, err
	}
	sc.Branches, err = library.ListBranches(tx)
	return sc, err
}

// Rules reads every rule, most specific first.
func (s *Service) Rules(ctx context.Context) ([]Rule, error) {
	var rs []Rule
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		rs, err = listRules(tx)
		return err
	})
	return rs, err
}

// RuleScopes reads what a new rule's scope may name.
func (s *Service) RuleScopes(ctx context.Context) (RuleScopes, error) {
	var sc RuleScopes
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		sc, err = readRuleScopes(tx)
		return err
	})
	return sc, err
}

// RuleToEdit reads a rule and what its scope may name, in one read transaction.
func (s *Service) RuleToEdit(ctx context.Context, id int64) (Rule, RuleScopes, error) {
	var r Rule
	var sc RuleScopes
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		if r, err = findRule(tx, id); err != nil {
			return err
		}
		sc, err = readRuleScopes(tx)
		return err
	})
	return r, sc, err
}

// SaveRule creates (ID 0) or updates a rule, in one write transaction that
// first reads what its scope may name and, for an update, the rule itself
// (ENOTFOUND when it is gone). accept then judges the rule against those scopes
// (a form's checks: a category deleted meanwhile); when it returns false
// nothing is written, and the scopes come back for the form.
func (s *Service) SaveRule(ctx context.Context, actor stacks.Actor, r Rule, accept func(RuleScopes) bool) (Rule, RuleScopes, error) {
	var saved Rule
	var sc RuleScopes
	err := s.DB.Write(ctx, func(tx *db.Tx) error {
		var err error
		if sc, err = readRuleScopes(tx); err != nil {
			return err
		}
		if r.ID != 0 {
			if _, err := findRule(tx, r.ID); err != nil {
				return err
			}
		}
		if !accept(sc) {
			return nil
		}
		saved, err = SaveRule(tx, actor, r)
		return err
	})
	return saved, sc, err
}

// RuleWithScope returns the id of another rule with r's scope, or 0: the rule a
// refused duplicate conflicts with.
func (s *Service) RuleWithScope(ctx context.Context, r Rule) (int64, error) {
	var id int64
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		rules, err := listRules(tx)
		for _, o := range rules {
			if o.PatronCategoryID == r.PatronCategoryID && o.ItemTypeID == r.ItemTypeID && o.BranchID == r.BranchID && o.ID != r.ID {
				id = o.ID
			}
		}
		return err
	})
	return id, err
}

// DeleteRule removes a rule and returns it as it was.
func (s *Service) DeleteRule(ctx context.Context, actor stacks.Actor, id int64) (Rule, error) {
	var r Rule
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		if r, err = findRule(tx, id); err != nil {
			return err
		}
		return deleteRule(tx, actor, id)
	})
	return r, err
}
