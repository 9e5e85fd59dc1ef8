package labels

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/go-pdf/fpdf"

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

// measurer measures text in the PDF's own font (Helvetica) and code page.
type measurer struct {
	pdf *fpdf.Fpdf
	tr  func(string) string
}

func newMeasurer() *measurer {
	p := fpdf.New("P", "mm", "A4", "")
	return &measurer{pdf: p, tr: p.UnicodeTranslatorFromDescriptor("")}
}

// width is the width of s at size points, in millimetres.
func (m *measurer) width(s string, size float64, bold bool) float64 {
	style := ""
	if bold {
		style = "B"
	}
	m.pdf.SetFont("Helvetica", style, size)
	return m.pdf.GetStringWidth(m.tr(s))
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
	m := newMeasurer()
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
		if tw := m.width(s, size, true); tw > w {
			size = size * w / tw
		}
	}
	lead := size * 1.2 * ptMM
	top := b.Y + (b.H-lead*float64(len(lines)))/2
	var out []Text
	for i, s := range lines {
		out = append(out, Text{X: b.X + b.W/2, Y: top + lead*float64(i) + size*ptMM*0.95, Size: size, Bold: true, S: s})
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
	d.Texts = append(d.Texts, Text{X: b.X + b.W/2, Y: numberY, Size: numberSize, S: l.Barcode})
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
	d.Texts = append(d.Texts, Text{X: b.X + b.W/2, Y: bottom, Size: size, S: l.Barcode})
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
// sheet, in Helvetica (text outside Windows-1252 shows as ?). The bars are
// filled rectangles; with outlines, each label's edge is a 0.1 mm line.
func WritePDF(w io.Writer, opt Options, ds []Drawing, title string) error {
	pdf := fpdf.NewCustom(&fpdf.InitType{OrientationStr: "P", UnitStr: "mm", Size: fpdf.SizeType{Wd: opt.Sheet.PageW, Ht: opt.Sheet.PageH}})
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetMargins(0, 0, 0)
	pdf.SetTitle(title, true)
	pdf.SetProducer("Stacks", false)
	pdf.SetCreationDate(time.Unix(0, 0).UTC())
	pdf.SetFillColor(0, 0, 0)
	pdf.SetDrawColor(160, 160, 160)
	pdf.SetLineWidth(0.1)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	page := -1
	for _, d := range ds {
		for page < d.Page {
			pdf.AddPage()
			page++
		}
		if opt.Outlines {
			pdf.Rect(d.Box.X, d.Box.Y, d.Box.W, d.Box.H, "D")
		}
		for _, b := range d.Bars {
			pdf.Rect(b.X, b.Y, b.W, b.H, "F")
		}
		for _, t := range d.Texts {
			style := ""
			if t.Bold {
				style = "B"
			}
			pdf.SetFont("Helvetica", style, t.Size)
			s := tr(t.S)
			x := t.X
			if !t.Left {
				x -= pdf.GetStringWidth(s) / 2
			}
			pdf.Text(x, t.Y, s)
		}
	}
	if err := pdf.Error(); err != nil {
		return fmt.Errorf("label pdf: %w", err)
	}
	return pdf.Output(w)
}
