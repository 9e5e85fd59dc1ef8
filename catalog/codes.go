package catalog

import (
	"context"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// Codes are the library's codes, as the page "Branches and types" lists them:
// the catalogue's item types with their replacement costs, and beside them the
// branches, patron categories and manual charge types, which library and
// patrons keep.
type Codes struct {
	Branches []library.Branch
	// Categories come with how long their cards are valid.
	Categories []patrons.Category
	ItemTypes  []library.Named
	// ItemTypePrices are the item types' default replacement costs, by code.
	ItemTypePrices map[string]int64
	ChargeTypes    []patrons.ChargeType
}

// Codes reads the codes page, in one transaction.
func (s *Service) Codes(ctx context.Context) (c Codes, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		if c.Branches, err = library.ListBranches(tx); err != nil {
			return err
		}
		if c.Categories, err = patrons.ListCategories(tx); err != nil {
			return err
		}
		if _, c.ItemTypes, err = library.ListScopes(tx); err != nil {
			return err
		}
		if c.ItemTypePrices, err = itemTypePrices(tx); err != nil {
			return err
		}
		c.ChargeTypes, err = patrons.ChargeTypes(tx)
		return err
	})
	return c, err
}

// The kinds of code AddCode adds.
const (
	CodeBranch   = "branch"
	CodeCategory = "category"
	CodeItemType = "item-type"
)

// AddCode adds a branch, a patron category or an item type (kind: one of the
// Code constants); notForLoan is for an item type only.
func (s *Service) AddCode(ctx context.Context, actor stacks.Actor, kind, code, name string, notForLoan bool) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		var err error
		switch kind {
		case CodeBranch:
			_, err = library.CreateBranch(tx, actor, code, name)
		case CodeCategory:
			_, err = patrons.CreateCategory(tx, actor, code, name)
		default:
			_, err = CreateItemType(tx, actor, code, name, notForLoan)
		}
		return err
	})
}

// SetItemTypePrice sets an item type's default replacement cost.
func (s *Service) SetItemTypePrice(ctx context.Context, actor stacks.Actor, code string, cents int64) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return setItemTypePrice(tx, actor, code, cents) })
}

// SaveChargeType creates or replaces a manual charge type (patrons keeps them).
func (s *Service) SaveChargeType(ctx context.Context, actor stacks.Actor, t patrons.ChargeType) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return patrons.SaveChargeType(tx, actor, t) })
}
