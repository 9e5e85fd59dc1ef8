package labels

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/code128"
	"github.com/boombuler/barcode/code39"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// Kinds of label.
const (
	KindSpine   = "spine"   // the call number, large, a line per part
	KindCode128 = "code128" // an item's barcode in Code 128, with its number and title
	KindCode39  = "code39"  // the same in Code 39, for older scanners
	KindPatron  = "patron"  // a patron card: library, name, card barcode (Code 128)
)

// KindOptions are the kinds of label, value and label for a form.
var KindOptions = [][2]string{
	{KindSpine, "Spine labels (call number)"},
	{KindCode128, "Barcode labels, Code 128"},
	{KindCode39, "Barcode labels, Code 39"},
	{KindPatron, "Patron cards"},
}

// Label is what one label shows.
type Label struct {
	// Barcode is the item's or the card's number, drawn as a barcode.
	Barcode    string
	CallNumber string
	Title      string
	Author     string
	// Name is the patron's name on a card; Library the library's.
	Name    string
	Library string
	Branch  string
}

// MaxLabels is the most labels one PDF holds.
const MaxLabels = 3000

// itemsByBarcode returns the labels of the items with the barcodes, in the order
// given; an unknown barcode is an error naming it.
func itemsByBarcode(tx *db.Tx, barcodes []string) ([]Label, error) {
	if len(barcodes) > MaxLabels {
		return nil, stacks.FieldErrorf("barcodes", stacks.EINVALID, "Print at most %d labels at a time.", MaxLabels)
	}
	out := make([]Label, 0, len(barcodes))
	st, err := tx.Prepare(`SELECT i.barcode, i.call_number, r.title, r.author, b.name FROM items i
		JOIN records r ON r.id = i.record_id JOIN branches b ON b.id = i.home_branch_id WHERE i.barcode = ?`)
	if err != nil {
		return nil, err
	}
	for _, raw := range barcodes {
		code, err := catalog.NormalizeBarcode(raw)
		if err != nil {
			return nil, stacks.FieldErrorf("barcodes", stacks.EINVALID, "%q is not a barcode: one barcode a line.", raw)
		}
		var l Label
		if err := st.QueryRow(code).Scan(&l.Barcode, &l.CallNumber, &l.Title, &l.Author, &l.Branch); err != nil {
			return nil, stacks.FieldErrorf("barcodes", stacks.EINVALID, "No item has barcode %s: check it, or remove it from the list.", code)
		}
		out = append(out, l)
	}
	return out, nil
}

// itemsAddedSince returns the labels of the items added on or after the day (at
// the branch, when branchID is not 0), in call number order.
func itemsAddedSince(tx *db.Tx, day time.Time, branchID int64) ([]Label, error) {
	rows, err := tx.Query(`SELECT i.barcode, i.call_number, r.title, r.author, b.name FROM items i
		JOIN records r ON r.id = i.record_id JOIN branches b ON b.id = i.home_branch_id
		WHERE i.created_at >= ? AND (? = 0 OR i.home_branch_id = ?) AND i.status <> 'withdrawn'
		ORDER BY i.call_number, i.barcode LIMIT ?`, db.FormatTime(day), branchID, branchID, MaxLabels+1)
	if err != nil {
		return nil, fmt.Errorf("items added since: %w", err)
	}
	defer rows.Close()
	var out []Label
	for rows.Next() {
		var l Label
		if err := rows.Scan(&l.Barcode, &l.CallNumber, &l.Title, &l.Author, &l.Branch); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	if len(out) > MaxLabels {
		return nil, stacks.FieldErrorf("since", stacks.EINVALID, "More than %d items were added since then: choose a later day or one branch.", MaxLabels)
	}
	return out, rows.Err()
}

// patronCards returns the card labels of the patrons with the card numbers.
func patronCards(tx *db.Tx, library string, cards []string) ([]Label, error) {
	if len(cards) > MaxLabels {
		return nil, stacks.FieldErrorf("barcodes", stacks.EINVALID, "Print at most %d cards at a time.", MaxLabels)
	}
	out := make([]Label, 0, len(cards))
	for _, c := range cards {
		var l Label
		err := tx.QueryRow(`SELECT p.card, trim(p.first_name || ' ' || p.surname), b.name FROM patrons p
			JOIN branches b ON b.id = p.home_branch_id WHERE p.card = ?`, strings.TrimSpace(c)).Scan(&l.Barcode, &l.Name, &l.Branch)
		if err != nil {
			return nil, stacks.FieldErrorf("barcodes", stacks.EINVALID, "No patron has card %s: check it, or remove it from the list.", c)
		}
		l.Library = library
		out = append(out, l)
	}
	return out, nil
}

// Lines splits a text field (barcodes or cards, one a line, or separated by
// spaces or commas) into its entries.
func Lines(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' || r == ' ' || r == '\t' })
}

// Bar is one dark bar of a barcode: its left edge and width, in modules.
type Bar struct{ X, W int }

// Barcode is a barcode's bars, ready to draw at any size.
type Barcode struct {
	// Modules is the barcode's width in modules (its narrowest bar), quiet zones
	// not included.
	Modules int
	Bars    []Bar
}

// Encode draws value as a Code 128 or Code 39 barcode (kind KindCode39, or any
// other for Code 128), with github.com/boombuler/barcode. Code 39 takes only
// upper-case letters, digits and - . $ / + % and space: other values are an error.
func Encode(kind, value string) (Barcode, error) {
	var bc barcode.Barcode
	var err error
	if kind == KindCode39 {
		bc, err = code39.Encode(value, false, false)
	} else {
		bc, err = code128.Encode(value)
	}
	if err != nil || value == "" || !utf8.ValidString(value) {
		if kind == KindCode39 {
			return Barcode{}, stacks.Errorf(stacks.EINVALID, "%s cannot be drawn in Code 39, which takes capital letters, digits, space and - . $ / + %%: choose Code 128.", value)
		}
		return Barcode{}, stacks.Errorf(stacks.EINVALID, "%s cannot be drawn as a Code 128 barcode.", value)
	}
	w := bc.Bounds().Dx()
	out := Barcode{Modules: w}
	dark := func(x int) bool { r, _, _, _ := bc.At(x, 0).RGBA(); return r < 0x8000 }
	for x := 0; x < w; {
		if !dark(x) {
			x++
			continue
		}
		start := x
		for x < w && dark(x) {
			x++
		}
		out.Bars = append(out.Bars, Bar{X: start, W: x - start})
	}
	return out, nil
}

// SpineLines splits a call number into the lines of a spine label: "FIC LEG"
// becomes FIC / LEG, "823.914 ORW" 823.914 / ORW.
func SpineLines(call string) []string {
	lines := strings.Fields(call)
	if len(lines) > 5 {
		lines = append(lines[:4], strings.Join(lines[4:], " "))
	}
	return lines
}
