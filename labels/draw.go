package labels

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/signintech/gopdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/stacks-ils/stacks"
)

// Options say how to print labels.
type Options struct {
	Sheet Sheet
	Kind  string
	// Start is the position of the first label on the first sheet (0 is the top
	// left), so that a partly used sheet can go through the printer again.
	Start int
	// Outlines draws each label's edge: print a page on plain paper, hold it
	// against a sheet of labels, and see that they line up.
	Outlines bool
}

// Box is a rectangle on the page, in millimetres from its top left corner.
type Box struct{ X, Y, W, H float64 }

// Text is a line of text: X is its centre (or its left edge when Left is set), Y
// its baseline, Size in points.
type Text struct {
	X, Y float64
	Size float64
	Bold bool
	// Mono sets the text in Go Mono: call numbers and barcodes, whose characters
	// staff read one by one.
	Mono bool
	Left bool
	S    string
}

// Drawing is one label laid out on its page: its box, its barcode's bars and its
// lines of text. The PDF and the HTML preview draw the same Drawings.
type Drawing struct {
	Page  int
	Box   Box
	Bars  []Box
	Texts []Text
}

// ptMM is a point in millimetres.
const ptMM = 25.4 / 72

// padding is the blank border inside a label (printers drift by a millimetre).
const padding = 2.5

// The fonts embedded in every PDF (as subsets: only the glyphs used): the Go
// fonts, TrueType with Latin, Greek and Cyrillic, so "Łukasz Dvořák" and "Война
// и мир" print as typed. They have no CJK glyphs: such characters print as the
// font's replacement glyph.
const (
	fontSans = "Go"
	fontMono = "GoMono"
)

// newPDF starts a PDF in millimetres with the Go fonts loaded.
func newPDF(pageW, pageH float64) (*gopdf.GoPdf, error) {
	pdf := &gopdf.GoPdf{}
	pdf.Start(gopdf.Config{Unit: gopdf.UnitMM, PageSize: gopdf.Rect{W: pageW, H: pageH}})
	for _, f := range []struct {
		family string
		style  int
		ttf    []byte
	}{
		{fontSans, gopdf.Regular, goregular.TTF},
		{fontSans, gopdf.Bold, gobold.TTF},
		{fontMono, gopdf.Regular, gomono.TTF},
		{fontMono, gopdf.Bold, gomonobold.TTF},
	} {
		if err := pdf.AddTTFFontDataWithOption(f.family, f.ttf, gopdf.TtfOption{Style: f.style, OnGlyphNotFoundSubstitute: gopdf.DefaultOnGlyphNotFoundSubstitute}); err != nil {
			return nil, fmt.Errorf("label pdf: font %s: %w", f.family, err)
		}
	}
	return pdf, nil
}

// setFont chooses the text's font on pdf.
func setFont(pdf *gopdf.GoPdf, t Text) error {
	family, style := fontSans, ""
	if t.Mono {
		family = fontMono
	}
	if t.Bold {
		style = "B"
	}
	return pdf.SetFont(family, style, t.Size)
}

// measurer measures text in the PDF's own fonts.
type measurer struct {
	pdf *gopdf.GoPdf
	err error
}

func newMeasurer() (*measurer, error) {
	p, err := newPDF(210, 297)
	if err != nil {
		return nil, err
	}
	return &measurer{pdf: p}, nil
}

// width is the width of s at size points, in millimetres.
func (m *measurer) width(s string, size float64, bold bool) float64 {
	return m.widthOf(Text{S: s, Size: size, Bold: bold})
}

// widthOf is the width of t in its font, in millimetres.
func (m *measurer) widthOf(t Text) float64 {
	if err := setFont(m.pdf, t); err != nil {
		m.err = err
		return 0
	}
	w, err := m.pdf.MeasureTextWidth(t.S)
	if err != nil {
		m.err = err
	}
	return w
}

// fit shortens s with an ellipsis until it fits in w millimetres.
func (m *measurer) fit(s string, size float64, bold bool, w float64) string {
	if m.width(s, size, bold) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 1 {
		r = r[:len(r)-1]
		if m.width(string(r)+"...", size, bold) <= w {
			return string(r) + "..."
		}
	}
	return ""
}

// Draw lays the labels out on the sheet: which page, where, and what each shows.
func Draw(opt Options, labels []Label) ([]Drawing, error) {
	if err := opt.Sheet.Validate(); err != nil {
		return nil, err
	}
	per := opt.Sheet.PerPage()
	if opt.Start < 0 || opt.Start >= per {
		return nil, stacks.FieldErrorf("start", stacks.EINVALID, "Start at a label from 1 to %d of the sheet.", per)
	}
	if len(labels) == 0 {
		return nil, stacks.Errorf(stacks.EINVALID, "There are no labels to print: list some barcodes, or choose an earlier day.")
	}
	if len(labels) > MaxLabels {
		return nil, stacks.Errorf(stacks.EINVALID, "Print at most %d labels at a time.", MaxLabels)
	}
	m, err := newMeasurer()
	if err != nil {
		return nil, err
	}
	out := make([]Drawing, 0, len(labels))
	for i, l := range labels {
		n := opt.Start + i
		x, y := opt.Sheet.Position(n)
		d := Drawing{Page: n / per, Box: Box{X: x, Y: y, W: opt.Sheet.LabelW, H: opt.Sheet.LabelH}}
		var err error
		switch opt.Kind {
		case KindSpine:
			d.Texts = spine(m, d.Box, l)
		case KindCode128, KindCode39:
			err = barcodeLabel(m, &d, opt.Kind, l)
		case KindPatron:
			err = patronCard(m, &d, l)
		default:
			return nil, stacks.FieldErrorf("kind", stacks.EINVALID, "Choose spine labels, barcode labels or patron cards.")
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if m.err != nil {
		return nil, fmt.Errorf("label text: %w", m.err)
	}
	return out, nil
}

// spine centres the call number's parts, one a line, as large as fits.
func spine(m *measurer, b Box, l Label) []Text {
	lines := SpineLines(l.CallNumber)
	if len(lines) == 0 {
		lines = []string{"(no call number)"}
	}
	w, h := b.W-2*padding, b.H-2*padding
	size := math.Min(16, h/(float64(len(lines))*1.2*ptMM))
	for _, s := range lines {
		if tw := m.widthOf(Text{S: s, Size: size, Bold: true, Mono: true}); tw > w {
			size = size * w / tw
		}
	}
	lead := size * 1.2 * ptMM
	top := b.Y + (b.H-lead*float64(len(lines)))/2
	var out []Text
	for i, s := range lines {
		out = append(out, Text{X: b.X + b.W/2, Y: top + lead*float64(i) + size*ptMM*0.95, Size: size, Bold: true, Mono: true, S: s})
	}
	return out
}

// bars lays a barcode out in the box: ten modules of quiet zone on each side,
// the modules as wide as fit (at most 0.5 mm).
func bars(code Barcode, area Box) []Box {
	module := math.Min(0.5, area.W/float64(code.Modules+20))
	left := area.X + (area.W-module*float64(code.Modules))/2
	out := make([]Box, len(code.Bars))
	for i, bar := range code.Bars {
		out[i] = Box{X: left + float64(bar.X)*module, Y: area.Y, W: float64(bar.W) * module, H: area.H}
	}
	return out
}

// barcodeLabel is a title line, the barcode, its number and the call number.
func barcodeLabel(m *measurer, d *Drawing, kind string, l Label) error {
	code, err := Encode(kind, l.Barcode)
	if err != nil {
		return err
	}
	b := d.Box
	w := b.W - 2*padding
	small := math.Min(7, b.H/6/ptMM)
	titleY := b.Y + padding + small*ptMM
	d.Texts = append(d.Texts, Text{X: b.X + b.W/2, Y: titleY, Size: small, S: m.fit(l.Title, small, false, w)})
	numberSize := math.Min(8, b.H/5/ptMM)
	bottom := b.Y + b.H - padding
	d.Texts = append(d.Texts, Text{X: b.X + b.W/2, Y: bottom, Size: small, S: m.fit(l.CallNumber+"  "+l.Branch, small, false, w)})
	numberY := bottom - small*ptMM*1.3
	d.Texts = append(d.Texts, Text{X: b.X + b.W/2, Y: numberY, Size: numberSize, Mono: true, S: l.Barcode})
	top := titleY + 1
	d.Bars = bars(code, Box{X: b.X + padding, Y: top, W: w, H: numberY - numberSize*ptMM - 0.8 - top})
	return nil
}

// patronCard is the library's name, the patron's, the card's barcode and number.
func patronCard(m *measurer, d *Drawing, l Label) error {
	code, err := Encode(KindCode128, l.Barcode)
	if err != nil {
		return err
	}
	b := d.Box
	w := b.W - 2*padding
	size := math.Min(8, b.H/6/ptMM)
	y := b.Y + padding + size*ptMM
	d.Texts = append(d.Texts, Text{X: b.X + b.W/2, Y: y, Size: size, Bold: true, S: m.fit(l.Library, size, true, w)})
	name := math.Min(10, b.H/5/ptMM)
	y += name * ptMM * 1.2
	d.Texts = append(d.Texts, Text{X: b.X + b.W/2, Y: y, Size: name, S: m.fit(l.Name, name, false, w)})
	bottom := b.Y + b.H - padding
	d.Texts = append(d.Texts, Text{X: b.X + b.W/2, Y: bottom, Size: size, Mono: true, S: l.Barcode})
	top := y + 1.2
	d.Bars = bars(code, Box{X: b.X + padding, Y: top, W: w, H: bottom - size*ptMM - 0.8 - top})
	return nil
}

// Pages is how many pages the drawings take.
func Pages(ds []Drawing) int {
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)-1].Page + 1
}

// WritePDF writes the drawings as a PDF of the sheet's page size, one page a
// sheet, in the Go fonts (embedded, so any Latin, Greek or Cyrillic name prints).
// The bars are filled rectangles; with outlines, each label's edge is a 0.1 mm
// line.
func WritePDF(w io.Writer, opt Options, ds []Drawing, title string) error {
	pdf, err := newPDF(opt.Sheet.PageW, opt.Sheet.PageH)
	if err != nil {
		return err
	}
	pdf.SetInfo(gopdf.PdfInfo{Title: title, Producer: "Stacks", CreationDate: time.Unix(0, 0).UTC()})
	m := &measurer{pdf: pdf}
	page := -1
	for _, d := range ds {
		for page < d.Page {
			pdf.AddPage()
			pdf.SetFillColor(0, 0, 0)
			pdf.SetStrokeColor(160, 160, 160)
			pdf.SetLineWidth(0.1)
			page++
		}
		if opt.Outlines {
			pdf.RectFromUpperLeftWithStyle(d.Box.X, d.Box.Y, d.Box.W, d.Box.H, "D")
		}
		for _, b := range d.Bars {
			pdf.RectFromUpperLeftWithStyle(b.X, b.Y, b.W, b.H, "F")
		}
		for _, t := range d.Texts {
			x := t.X
			if !t.Left {
				x -= m.widthOf(t) / 2
			}
			if err := setFont(pdf, t); err != nil {
				return fmt.Errorf("label pdf: %w", err)
			}
			pdf.SetXY(x, t.Y)
			if err := pdf.Text(t.S); err != nil {
				return fmt.Errorf("label pdf: %w", err)
			}
		}
	}
	if m.err != nil {
		return fmt.Errorf("label pdf: %w", m.err)
	}
	if _, err := pdf.WriteTo(w); err != nil {
		return fmt.Errorf("label pdf: %w", err)
	}
	return nil
}
