package catalog

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// CreateItemType adds an item type and returns its id. Items of a type not for
// loan (reference) are refused at the desk.
func CreateItemType(tx *db.Tx, actor stacks.Actor, code, name string, notForLoan bool) (int64, error) {
	code, err := stacks.NormalizeCode("item_type", code)
	if err != nil {
		return 0, err
	}
	if name, err = stacks.NormalizeName("item_type_name", name); err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO item_types (code, name, not_for_loan) VALUES (?, ?, ?) RETURNING id`, code, name, notForLoan).Scan(&id)
	if db.IsUniqueViolation(err) {
		return 0, stacks.FieldErrorf("item_type", stacks.ECONFLICT, "There is already an item type with code %s.", code)
	} else if err != nil {
		return 0, fmt.Errorf("insert item type: %w", err)
	}
	return id, tx.Audit(actor, "item_type.create", "item_type", id, code)
}

// itemTypePrices returns the item types' default replacement costs (billed for a
// lost item whose own price is 0), by code.
func itemTypePrices(tx *db.Tx) (map[string]int64, error) {
	rows, err := tx.Query(`SELECT code, default_price_cents FROM item_types`)
	if err != nil {
		return nil, fmt.Errorf("item type prices: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var code string
		var cents int64
		if err := rows.Scan(&code, &cents); err != nil {
			return nil, err
		}
		out[code] = cents
	}
	return out, rows.Err()
}

// setItemTypePrice sets the default replacement cost of the item type with code.
func setItemTypePrice(tx *db.Tx, actor stacks.Actor, code string, cents int64) error {
	if cents < 0 {
		return stacks.FieldErrorf("item_type_price", stacks.EINVALID, "The replacement cost cannot be negative.")
	}
	var id int64
	err := tx.QueryRow(`UPDATE item_types SET default_price_cents = ? WHERE code = ? RETURNING id`, cents, code).Scan(&id)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return stacks.FieldErrorf("item_type_price_type", stacks.EINVALID, "Choose an item type from the list.")
		}
		return fmt.Errorf("set item type price: %w", err)
	}
	return tx.Audit(actor, "item_type.price", "item_type", id, fmt.Sprintf("%s %s", code, stacks.FormatMoney(cents)))
}
