package circulation

import (
	"context"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
)

// PlaceHoldFor places a hold on the title staff named by what they typed (item):
// a copy's barcode, else an ISBN that exactly one record has. The title is found
// in a read transaction, then the hold placed as PlaceHold does; a title not
// found is a refusal on the "item" field.
func (s *Service) PlaceHoldFor(ctx context.Context, req holds.PlaceRequest, item string) (holds.Placed, error) {
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		req.RecordID, err = holdRecordFor(tx, item)
		return err
	})
	if err != nil {
		return holds.Placed{}, err
	}
	return s.PlaceHold(ctx, req)
}

// holdRecordFor finds the title to hold from what staff typed: a copy's barcode,
// else an ISBN that exactly one record has.
func holdRecordFor(tx *db.Tx, input string) (int64, error) {
	if input == "" {
		return 0, stacks.FieldErrorf("item", stacks.EINVALID, "Scan a copy's barcode, or type the ISBN of the title to hold.")
	}
	barcode, err := catalog.NormalizeBarcode(input)
	if err != nil {
		return 0, err
	}
	it, err := catalog.FindItemByBarcode(tx, barcode)
	if err == nil {
		return it.RecordID, nil
	} else if stacks.ErrorCode(err) != stacks.ENOTFOUND {
		return 0, err
	}
	isbn, ok := isbnOf(input)
	if !ok {
		return 0, stacks.FieldErrorf("item", stacks.ENOTFOUND, "No item has barcode %s. Scan the copy again, or type the title's ISBN.", barcode)
	}
	res, err := catalog.Search(tx, catalog.SearchQuery{Text: "isbn:" + isbn, PerPage: 2})
	if err != nil {
		return 0, err
	}
	switch {
	case res.Total == 0 || len(res.Hits) == 0:
		return 0, stacks.FieldErrorf("item", stacks.ENOTFOUND, "No item has barcode %s and no record has ISBN %s. Search the catalogue for the title.", barcode, isbn)
	case res.Total > 1:
		return 0, stacks.FieldErrorf("item", stacks.ECONFLICT, "%d records have ISBN %s. Find the title in Search and place the hold from its record.", res.Total, isbn)
	}
	return res.Hits[0].RecordID, nil
}

// isbnOf returns s as an ISBN without hyphens or spaces, if it has the form of one:
// ten characters (nine digits, then a digit or X) or thirteen digits.
func isbnOf(s string) (string, bool) {
	s = strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(s))
	digits := func(s string) bool {
		return s != "" && strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) < 0
	}
	switch len(s) {
	case 10:
		return s, digits(s[:9]) && (digits(s[9:]) || s[9] == 'X')
	case 13:
		return s, digits(s)
	}
	return "", false
}
