// Package labels prints spine labels, barcode labels (Code 128 and Code 39) and
// patron cards on sheets of sticky labels: the sheet layouts, the items and
// patrons to print, the barcodes (drawn by github.com/boombuler/barcode) and the
// PDF (github.com/signintech/gopdf). Positions are in millimetres from the top left
// corner of the page, as label makers publish them.
package labels

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
)

// Sheet is a sheet of labels: its page and the grid of labels on it.
type Sheet struct {
	Key  string
	Name string
	// PageW and PageH are the page's size.
	PageW, PageH float64
	Cols, Rows   int
	// LabelW and LabelH are a label's size; Left and Top the margins to the
	// first label's corner; PitchX and PitchY the distance from one label's
	// corner to the next one's, across and down (size plus gap).
	LabelW, LabelH float64
	Left, Top      float64
	PitchX, PitchY float64
}

// Page sizes, in millimetres.
const (
	letterW, letterH = 215.9, 279.4
	a4W, a4H         = 210, 297
	inch             = 25.4
)

// Sheets are the layouts offered, by Key. Each matches a common product: the
// 30-up address label of US Letter (2 5/8 x 1 inch, as Avery 5160), the 21-up A4
// sheet (63.5 x 38.1 mm, as Avery L7160) and the 24-up A4 sheet (63.5 x 33.9 mm,
// as Avery L7159). Custom layouts are made with Custom.
var Sheets = []Sheet{
	{Key: "letter-3x10", Name: "US Letter, 3 x 10 (2 5/8 x 1 in)", PageW: letterW, PageH: letterH, Cols: 3, Rows: 10,
		LabelW: 2.625 * inch, LabelH: 1 * inch, Left: 0.1875 * inch, Top: 0.5 * inch, PitchX: 2.75 * inch, PitchY: 1 * inch},
	{Key: "a4-3x7", Name: "A4, 3 x 7 (63.5 x 38.1 mm)", PageW: a4W, PageH: a4H, Cols: 3, Rows: 7,
		LabelW: 63.5, LabelH: 38.1, Left: 7.2, Top: 15.15, PitchX: 66.04, PitchY: 38.1},
	{Key: "a4-3x8", Name: "A4, 3 x 8 (63.5 x 33.9 mm)", PageW: a4W, PageH: a4H, Cols: 3, Rows: 8,
		LabelW: 63.5, LabelH: 33.9, Left: 7.2, Top: 12.9, PitchX: 66.04, PitchY: 33.9},
}

// FindSheet returns the layout with key.
func FindSheet(key string) (Sheet, error) {
	for _, s := range Sheets {
		if s.Key == key {
			return s, nil
		}
	}
	return Sheet{}, stacks.FieldErrorf("sheet", stacks.EINVALID, "Choose a label sheet from the list, or Custom.")
}

// PerPage is how many labels a sheet holds.
func (s Sheet) PerPage() int { return s.Cols * s.Rows }

// Position returns the top left corner of the i-th label of a page (0 is the
// top left label; labels run across, then down).
func (s Sheet) Position(i int) (x, y float64) {
	i %= s.PerPage()
	return s.Left + float64(i%s.Cols)*s.PitchX, s.Top + float64(i/s.Cols)*s.PitchY
}

// Validate checks that the labels are of a sensible size and fit on the page.
func (s Sheet) Validate() error {
	switch {
	case s.PageW < 50 || s.PageH < 50 || s.PageW > 500 || s.PageH > 500:
		return stacks.FieldErrorf("page", stacks.EINVALID, "The page must be between 50 and 500 mm on each side.")
	case s.Cols < 1 || s.Rows < 1 || s.Cols > 20 || s.Rows > 40:
		return stacks.FieldErrorf("cols", stacks.EINVALID, "A sheet has 1 to 20 columns and 1 to 40 rows of labels.")
	case s.LabelW < 10 || s.LabelH < 5:
		return stacks.FieldErrorf("label_w", stacks.EINVALID, "A label is at least 10 mm wide and 5 mm high.")
	case s.PitchX < s.LabelW || s.PitchY < s.LabelH:
		return stacks.FieldErrorf("pitch_x", stacks.EINVALID, "The distance from one label to the next must be at least the label's size.")
	case s.Left < 0 || s.Top < 0:
		return stacks.FieldErrorf("left", stacks.EINVALID, "Margins cannot be negative.")
	}
	right := s.Left + float64(s.Cols-1)*s.PitchX + s.LabelW
	bottom := s.Top + float64(s.Rows-1)*s.PitchY + s.LabelH
	if right > s.PageW+0.01 || bottom > s.PageH+0.01 {
		return stacks.FieldErrorf("cols", stacks.EINVALID, "These labels do not fit on the page: they reach %.1f x %.1f mm on a %.1f x %.1f mm page.", right, bottom, s.PageW, s.PageH)
	}
	return nil
}

// Custom reads a custom layout from a form: page (letter or a4), cols, rows,
// label_w, label_h, left, top, pitch_x, pitch_y, in millimetres.
func Custom(v url.Values) (Sheet, error) {
	s := Sheet{Key: "custom", Name: "Custom"}
	switch v.Get("page") {
	case "a4":
		s.PageW, s.PageH = a4W, a4H
	case "letter", "":
		s.PageW, s.PageH = letterW, letterH
	default:
		return s, stacks.FieldErrorf("page", stacks.EINVALID, "Choose A4 or US Letter paper.")
	}
	ints := []struct {
		field string
		to    *int
	}{{"cols", &s.Cols}, {"rows", &s.Rows}}
	for _, f := range ints {
		n, err := strconv.Atoi(strings.TrimSpace(v.Get(f.field)))
		if err != nil {
			return s, stacks.FieldErrorf(f.field, stacks.EINVALID, "Enter how many %s of labels the sheet has, as a whole number.", f.field)
		}
		*f.to = n
	}
	mms := []struct {
		field, label string
		to           *float64
	}{{"label_w", "label width", &s.LabelW}, {"label_h", "label height", &s.LabelH}, {"left", "left margin", &s.Left},
		{"top", "top margin", &s.Top}, {"pitch_x", "distance across", &s.PitchX}, {"pitch_y", "distance down", &s.PitchY}}
	for _, f := range mms {
		x, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(v.Get(f.field), ",", ".")), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return s, stacks.FieldErrorf(f.field, stacks.EINVALID, "Enter the %s in millimetres, for example 63.5.", f.label)
		}
		*f.to = x
	}
	return s, s.Validate()
}

// Describe says the layout in words.
func (s Sheet) Describe() string {
	return fmt.Sprintf("%d x %d labels of %.1f x %.1f mm", s.Cols, s.Rows, s.LabelW, s.LabelH)
}
