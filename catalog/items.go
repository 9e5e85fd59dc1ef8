// Package catalog owns the bibliographic records and the items (copies) that belong
// to them: finding them, describing them, and their shelf status.
package catalog

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Item statuses.
const (
	StatusAvailable   = "available"
	StatusOnLoan      = "on_loan"
	StatusInTransit   = "in_transit"
	StatusOnHoldShelf = "on_hold_shelf"
	StatusLost        = "lost"
	StatusWithdrawn   = "withdrawn"
	StatusMissing     = "missing"
)

// StatusLabel is how staff read an item status.
func StatusLabel(status string) string {
	switch status {
	case StatusAvailable:
		return "Available"
	case StatusOnLoan:
		return "Checked out"
	case StatusInTransit:
		return "In transit"
	case StatusOnHoldShelf:
		return "On hold shelf"
	case StatusLost:
		return "Lost"
	case StatusWithdrawn:
		return "Withdrawn"
	case StatusMissing:
		return "Missing"
	}
	return status
}

// Item is a copy, with what the desk needs to know of its record and type.
type Item struct {
	ID         int64
	Barcode    string
	RecordID   int64
	Title      string
	Author     string
	CallNumber string
	// Location is the shelving location within the home branch ("Adult
	// fiction", "Reference"): Koha's items.location, 952 $c. Empty for none.
	Location        string
	HomeBranchID    int64
	HomeBranchCode  string
	HomeBranchName  string
	CurrentBranchID int64
	Status          string
	TransitToID     int64
	ItemTypeID      int64
	ItemTypeName    string
	NotForLoan      bool
	// TransitToName is the branch an item in transit is going to.
	TransitToName string
	// SIPProperties is what self-checks and sorters stored on the item (SIP2 item
	// properties, field CH): free text they agree on, such as a security marker's
	// kind. Stacks keeps it and sends it back; it means nothing to the desk.
	SIPProperties string
}

// ItemColumns and ItemFrom select an Item; other packages join to them (circulation
// adds the current loan) and scan with ScanItemInto.
const ItemColumns = `i.id, i.barcode, i.record_id, r.title, r.author, i.call_number, i.home_branch_id, hb.code, hb.name,
	i.current_branch_id, i.status, coalesce(i.transit_to_id, 0), i.item_type_id, it.name, it.not_for_loan,
	coalesce(ttb.name, ''), i.sip_properties, i.location`

// ItemFrom is the FROM clause for ItemColumns.
const ItemFrom = ` FROM items i
	JOIN records r ON r.id = i.record_id
	JOIN branches hb ON hb.id = i.home_branch_id
	JOIN item_types it ON it.id = i.item_type_id
	LEFT JOIN branches ttb ON ttb.id = i.transit_to_id`

// ItemScanDest returns the scan destinations for ItemColumns, in order.
func (it *Item) ItemScanDest() []any {
	return []any{&it.ID, &it.Barcode, &it.RecordID, &it.Title, &it.Author, &it.CallNumber, &it.HomeBranchID, &it.HomeBranchCode, &it.HomeBranchName,
		&it.CurrentBranchID, &it.Status, &it.TransitToID, &it.ItemTypeID, &it.ItemTypeName, &it.NotForLoan, &it.TransitToName, &it.SIPProperties, &it.Location}
}

// StatusText is how staff read the item's status, with where an item in transit
// is going: "In transit to Westside".
func (it *Item) StatusText() string {
	if it.Status == StatusInTransit && it.TransitToName != "" {
		return "In transit to " + it.TransitToName
	}
	return StatusLabel(it.Status)
}

// NormalizeBarcode trims what scanners and hands add around a barcode. It returns
// an error message for input that cannot be a barcode.
func NormalizeBarcode(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", stacks.FieldErrorf("barcode", stacks.EINVALID, "Scan or type a barcode.")
	case !utf8.ValidString(s) || len(s) > 64 || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", stacks.FieldErrorf("barcode", stacks.EINVALID, "That is not a barcode: barcodes are up to 64 letters and digits. Scan it again.")
	}
	return s, nil
}

// FindItemByBarcode returns the item with the barcode.
func FindItemByBarcode(tx *db.Tx, barcode string) (*Item, error) {
	var it Item
	err := tx.QueryRow(`SELECT `+ItemColumns+ItemFrom+` WHERE i.barcode = ?`, barcode).Scan(it.ItemScanDest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrUnknownBarcode(barcode)
	} else if err != nil {
		return nil, fmt.Errorf("find item %q: %w", barcode, err)
	}
	return &it, nil
}

// ErrUnknownBarcode is the error for a barcode no item has.
func ErrUnknownBarcode(barcode string) error {
	return stacks.FieldErrorf("barcode", stacks.ENOTFOUND, "No item has barcode %s. Check the barcode, or add the item to the catalogue.", barcode)
}

// SetItemLocation sets an item's status, current branch and transit destination.
func SetItemLocation(tx *db.Tx, itemID int64, status string, currentBranchID, transitToID int64) error {
	var transit sql.NullInt64
	if transitToID != 0 {
		transit = sql.NullInt64{Int64: transitToID, Valid: true}
	}
	_, err := tx.Exec(`UPDATE items SET status = ?, current_branch_id = ?, transit_to_id = ?, updated_at = ? WHERE id = ?`,
		status, currentBranchID, transit, db.FormatTime(tx.Now()), itemID)
	if err != nil {
		return fmt.Errorf("update item %d: %w", itemID, err)
	}
	return nil
}

// SetItemStatus sets only an item's status.
func SetItemStatus(tx *db.Tx, itemID int64, status string) error {
	_, err := tx.Exec(`UPDATE items SET status = ?, updated_at = ? WHERE id = ?`, status, db.FormatTime(tx.Now()), itemID)
	if err != nil {
		return fmt.Errorf("update item %d: %w", itemID, err)
	}
	return nil
}

// maxSIPProperties is the longest item properties a terminal may store, in
// characters.
const maxSIPProperties = 255

// SetItemSIPProperties stores what a self-check or sorter sends as the item's
// properties (SIP2 Item Status Update, field CH), replacing what was there; empty
// clears them. The audit log keeps the old and new values.
func SetItemSIPProperties(tx *db.Tx, actor stacks.Actor, itemID int64, props string) error {
	switch {
	case !utf8.ValidString(props) || strings.ContainsFunc(props, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return stacks.FieldErrorf("sip_properties", stacks.EINVALID, "The item properties contain characters that are not text.")
	case utf8.RuneCountInString(props) > maxSIPProperties:
		return stacks.FieldErrorf("sip_properties", stacks.EINVALID, "The item properties are longer than %d characters.", maxSIPProperties)
	}
	var old string
	err := tx.QueryRow(`SELECT sip_properties FROM items WHERE id = ?`, itemID).Scan(&old)
	if errors.Is(err, sql.ErrNoRows) {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no item with id %d.", itemID)
	} else if err != nil {
		return fmt.Errorf("set item properties of item %d: %w", itemID, err)
	}
	if old == props {
		return nil
	}
	if _, err := tx.Exec(`UPDATE items SET sip_properties = ?, updated_at = ? WHERE id = ?`, props, db.FormatTime(tx.Now()), itemID); err != nil {
		return fmt.Errorf("set item properties of item %d: %w", itemID, err)
	}
	return tx.Audit(actor, "item.sip_properties", "item", itemID, fmt.Sprintf("%q to %q", old, props))
}

// CopyBarcode returns the barcode of one copy of a record that is in circulation
// (not withdrawn, lost or missing): the lowest barcode, so that the answer is the
// same every time; "" when the record has none. A SIP terminal that lists a
// title-level hold by barcode looks it up (item information) to show the title.
func CopyBarcode(tx *db.Tx, recordID int64) (string, error) {
	var barcode string
	err := tx.QueryRow(`SELECT barcode FROM items WHERE record_id = ? AND status NOT IN (?, ?, ?)
		ORDER BY barcode LIMIT 1`, recordID, StatusWithdrawn, StatusLost, StatusMissing).Scan(&barcode)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("find a copy of record %d: %w", recordID, err)
	}
	return barcode, nil
}

// newItemDefaults returns what a new copy of a record most likely shares with the
// copies already there: the item type, call number, shelving location and price of
// the record's newest copy (the last added, whatever its status), so that staff
// adding copies only scan barcodes. The barcode and home branch are left empty;
// found is false, and the input empty, when the record has no copies yet.
func newItemDefaults(tx *db.Tx, recordID int64) (in ItemInput, found bool, err error) {
	var price int64
	err = tx.QueryRow(`SELECT it.code, i.call_number, i.location, i.price_cents
		FROM items i JOIN item_types it ON it.id = i.item_type_id
		WHERE i.record_id = ? ORDER BY i.created_at DESC, i.id DESC LIMIT 1`, recordID).
		Scan(&in.ItemTypeCode, &in.CallNumber, &in.Location, &price)
	if errors.Is(err, sql.ErrNoRows) {
		return ItemInput{}, false, nil
	} else if err != nil {
		return ItemInput{}, false, fmt.Errorf("find the newest copy of record %d: %w", recordID, err)
	}
	if price != 0 {
		in.Price = formatPrice(price)
	}
	return in, true, nil
}

// checkNewBarcode normalizes the barcode of a copy about to be added and checks that
// no item has it yet, so that a scanned label is refused before staff fill in the
// rest. The error's Field is barcode.
func checkNewBarcode(tx *db.Tx, barcode string) (string, error) {
	barcode, err := NormalizeBarcode(barcode)
	if err != nil {
		return "", err
	}
	var used bool
	if err := tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM items WHERE barcode = ?)`, barcode).Scan(&used); err != nil {
		return "", fmt.Errorf("look up barcode %s: %w", barcode, err)
	}
	if used {
		return "", errBarcodeInUse(barcode)
	}
	return barcode, nil
}
