package labels_test

import (
	"bytes"
	"compress/zlib"
	"image"
	"image/color"
	"image/draw"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/oned"

	"github.com/stacks-ils/stacks/labels"
)

// pdfRect is a rectangle read back from a PDF page's content stream, converted
// to millimetres from the page's top left corner.
type pdfRect struct {
	labels.Box
	Op string // f (filled) or S (stroked)
}

var streamRE = regexp.MustCompile(`(?s)stream\n(.*?)\nendstream`)
var rectRE = regexp.MustCompile(`(-?[0-9.]+) (-?[0-9.]+) (-?[0-9.]+) (-?[0-9.]+) re ([fS])`)

// pageRects reads a PDF back: each content stream (inflated: gopdf compresses
// them) is a page; each "x y w h re f|S" on it is a rectangle in points from the
// bottom left, which it turns into millimetres from the top left.
// (The font streams inflate too but hold no " re ".)
func pageRects(t *testing.T, pdf []byte, pageH float64) [][]pdfRect {
	t.Helper()
	const k = 72 / 25.4
	var pages [][]pdfRect
	for _, m := range streamRE.FindAllSubmatch(pdf, -1) {
		zr, err := zlib.NewReader(bytes.NewReader(m[1]))
		if err != nil {
			continue // not a compressed content stream
		}
		content, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(content, []byte(" re ")) {
			continue
		}
		var rects []pdfRect
		for _, r := range rectRE.FindAllSubmatch(content, -1) {
			var v [4]float64
			for i := range v {
				v[i], _ = strconv.ParseFloat(string(r[i+1]), 64)
			}
			// "x y w h re": a corner and the size, with h up the page when
			// positive; the top edge is the greater of y and y+h.
			top := math.Max(v[1], v[1]+v[3])
			rects = append(rects, pdfRect{Box: labels.Box{X: v[0] / k, Y: pageH - top/k, W: v[2] / k, H: math.Abs(v[3]) / k}, Op: string(r[5])})
		}
		pages = append(pages, rects)
	}
	return pages
}

func render(t *testing.T, opt labels.Options, ls []labels.Label) ([]labels.Drawing, []byte) {
	t.Helper()
	ds, err := labels.Draw(opt, ls)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := labels.WritePDF(&buf, opt, ds, "test"); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("%PDF-")) {
		t.Fatalf("not a PDF: %q", buf.Bytes()[:20])
	}
	return ds, buf.Bytes()
}

// TestSheetPositions: on every sheet, over two pages and starting part-way down
// the first, each label's outline in the PDF is where the sheet's layout puts it,
// within 0.5 mm (the PDF rounds to 0.01 pt), and its bars lie inside it.
func TestSheetPositions(t *testing.T) {
	for _, sheet := range labels.Sheets {
		t.Run(sheet.Key, func(t *testing.T) {
			const start = 4
			n := sheet.PerPage() + 5
			ls := make([]labels.Label, n)
			for i := range ls {
				ls[i] = labels.Label{Barcode: "3999900000" + strconv.Itoa(1000+i), Title: "Title", CallNumber: "FIC LEG"}
			}
			opt := labels.Options{Sheet: sheet, Kind: labels.KindCode128, Start: start, Outlines: true}
			ds, pdf := render(t, opt, ls)
			pages := pageRects(t, pdf, sheet.PageH)
			if len(pages) != 2 {
				t.Fatalf("%d pages, want 2", len(pages))
			}
			var outlines [][]pdfRect
			var bars [][]pdfRect
			for _, p := range pages {
				var o, b []pdfRect
				for _, r := range p {
					if r.Op == "S" {
						o = append(o, r)
					} else {
						b = append(b, r)
					}
				}
				outlines, bars = append(outlines, o), append(bars, b)
			}
			if got, want := len(outlines[0]), sheet.PerPage()-start; got != want {
				t.Errorf("page 1 has %d labels, want %d", got, want)
			}
			if got, want := len(outlines[1]), n-(sheet.PerPage()-start); got != want {
				t.Errorf("page 2 has %d labels, want %d", got, want)
			}
			i := 0
			worst := 0.0
			for p := range outlines {
				for _, o := range outlines[p] {
					pos := start + i
					wantX, wantY := sheet.Position(pos)
					for _, d := range []float64{o.X - wantX, o.Y - wantY, o.W - sheet.LabelW, o.H - sheet.LabelH} {
						worst = math.Max(worst, math.Abs(d))
					}
					if math.Abs(o.X-wantX) > 0.5 || math.Abs(o.Y-wantY) > 0.5 || math.Abs(o.W-sheet.LabelW) > 0.5 || math.Abs(o.H-sheet.LabelH) > 0.5 {
						t.Errorf("label %d (page %d): at %.2f,%.2f size %.2fx%.2f, layout says %.2f,%.2f size %.2fx%.2f",
							i, p+1, o.X, o.Y, o.W, o.H, wantX, wantY, sheet.LabelW, sheet.LabelH)
					}
					if ds[i].Page != p {
						t.Errorf("label %d: drawn on page %d, PDF page %d", i, ds[i].Page+1, p+1)
					}
					i++
				}
				for _, b := range bars[p] {
					inside := false
					for _, o := range outlines[p] {
						if b.X >= o.X && b.X+b.W <= o.X+o.W && b.Y >= o.Y && b.Y+b.H <= o.Y+o.H {
							inside = true
						}
					}
					if !inside {
						t.Errorf("a bar at %.2f,%.2f on page %d is outside every label", b.X, b.Y, p+1)
						break
					}
				}
			}
			t.Logf("%d labels, worst difference from the layout %.3f mm", i, worst)
		})
	}
}

// decode rasterises the bars the PDF drew for one label (20 pixels a millimetre)
// and reads them with ZXing's Go port.
func decode(t *testing.T, kind string, bars []pdfRect, box labels.Box) string {
	t.Helper()
	const px = 20.0
	w, h := int(box.W*px), 60
	img := image.NewGray(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.White}, image.Point{}, draw.Src)
	for _, b := range bars {
		x0, x1 := int(math.Round((b.X-box.X)*px)), int(math.Round((b.X+b.W-box.X)*px))
		draw.Draw(img, image.Rect(x0, 0, x1, h), &image.Uniform{color.Black}, image.Point{}, draw.Src)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	var r gozxing.Reader = oned.NewCode128Reader()
	if kind == labels.KindCode39 {
		r = oned.NewCode39Reader()
	}
	res, err := r.Decode(bmp, map[gozxing.DecodeHintType]interface{}{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatalf("decoding the %s bars: %v", kind, err)
	}
	return res.GetText()
}

// TestBarcodesDecode: the bars each label's PDF page holds decode back to the
// item's (or card's) barcode, in Code 128 and in Code 39, on the narrowest sheet.
func TestBarcodesDecode(t *testing.T) {
	sheet, _ := labels.FindSheet("letter-3x10")
	for _, kind := range []string{labels.KindCode128, labels.KindCode39, labels.KindPatron} {
		t.Run(kind, func(t *testing.T) {
			codes := []string{"I00010", "39999000041119", "P0003", "0012345"}
			ls := make([]labels.Label, len(codes))
			for i, c := range codes {
				ls[i] = labels.Label{Barcode: c, Title: "The Left Hand of Darkness", CallNumber: "SF LEG", Name: "Casey Waiting", Library: "Stacks Library"}
			}
			opt := labels.Options{Sheet: sheet, Kind: kind, Outlines: true}
			_, pdf := render(t, opt, ls)
			page := pageRects(t, pdf, sheet.PageH)[0]
			var outlines []pdfRect
			for _, r := range page {
				if r.Op == "S" {
					outlines = append(outlines, r)
				}
			}
			for i, o := range outlines {
				var bars []pdfRect
				for _, r := range page {
					if r.Op == "f" && r.X >= o.X && r.X+r.W <= o.X+o.W && r.Y >= o.Y && r.Y+r.H <= o.Y+o.H {
						bars = append(bars, r)
					}
				}
				bk := kind
				if kind == labels.KindPatron {
					bk = labels.KindCode128
				}
				if got := decode(t, bk, bars, o.Box); got != codes[i] {
					t.Errorf("label %d decodes to %q, want %q", i, got, codes[i])
				}
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	sheet, _ := labels.FindSheet("a4-3x7")
	if _, err := labels.Draw(labels.Options{Sheet: sheet, Kind: labels.KindCode39}, []labels.Label{{Barcode: "abc"}}); err == nil || !strings.Contains(err.Error(), "Code 39") {
		t.Errorf("lower case in Code 39: %v", err)
	}
	if _, err := labels.Draw(labels.Options{Sheet: sheet, Kind: labels.KindSpine, Start: 21}, []labels.Label{{CallNumber: "X"}}); err == nil {
		t.Error("start past the sheet accepted")
	}
	for _, v := range []map[string]string{
		{"cols": "4", "rows": "10", "label_w": "63.5", "label_h": "25.4", "left": "5", "top": "12", "pitch_x": "66", "pitch_y": "25.4"},
		{"cols": "x"},
		{"cols": "3", "rows": "7", "label_w": "NaN", "label_h": "38", "left": "7", "top": "15", "pitch_x": "66", "pitch_y": "38"},
	} {
		form := map[string][]string{}
		for k, s := range v {
			form[k] = []string{s}
		}
		if _, err := labels.Custom(form); err == nil {
			t.Errorf("custom sheet %v accepted", v)
		}
	}
	ok := map[string][]string{"page": {"a4"}, "cols": {"2"}, "rows": {"5"}, "label_w": {"99"}, "label_h": {"57"}, "left": {"4.5"}, "top": {"5"}, "pitch_x": {"101.5"}, "pitch_y": {"57"}}
	if s, err := labels.Custom(ok); err != nil || s.PerPage() != 10 {
		t.Errorf("a 2 x 5 A4 sheet: %v", err)
	}
}

var (
	bfrangeRE = regexp.MustCompile(`<([0-9A-F]{4})><([0-9A-F]{4})><([0-9A-F]{4,})>`)
	tjRE      = regexp.MustCompile(`\[<([0-9A-F]*)>\] TJ`)
)

// pdfTexts reads back the text a PDF shows: each TJ's glyph indexes, decoded with
// each embedded font's ToUnicode map (the one that decodes every glyph of the
// string), as a reader's copy and paste or search would.
func pdfTexts(t *testing.T, pdf []byte) []string {
	t.Helper()
	var cmaps []map[string]rune
	var shows []string
	for _, m := range streamRE.FindAllSubmatch(pdf, -1) {
		content := m[1] // gopdf writes the ToUnicode maps uncompressed
		if zr, err := zlib.NewReader(bytes.NewReader(m[1])); err == nil {
			if content, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if bytes.Contains(content, []byte("beginbfrange")) {
			cm := map[string]rune{}
			for _, r := range bfrangeRE.FindAllSubmatch(content, -1) {
				v, _ := strconv.ParseUint(string(r[3]), 16, 32)
				cm[string(r[1])] = rune(v)
			}
			cmaps = append(cmaps, cm)
		}
		for _, s := range tjRE.FindAllSubmatch(content, -1) {
			shows = append(shows, string(s[1]))
		}
	}
	var out []string
	for _, hex := range shows {
		for _, cm := range cmaps {
			var b strings.Builder
			ok := true
			for i := 0; i+4 <= len(hex); i += 4 {
				r, found := cm[hex[i:i+4]]
				if !found {
					ok = false
					break
				}
				b.WriteRune(r)
			}
			if ok {
				out = append(out, b.String())
				break
			}
		}
	}
	return out
}

// TestUnicodeText: a patron card for "Łukasz Dvořák" and a barcode label for
// "Война и мир" show those names in the PDF, in glyphs of the embedded font that
// map back to the same characters (not dots or question marks).
func TestUnicodeText(t *testing.T) {
	sheet, _ := labels.FindSheet("a4-3x7")
	for _, c := range []struct {
		kind string
		l    labels.Label
		want string
	}{
		{labels.KindPatron, labels.Label{Barcode: "P0042", Name: "Łukasz Dvořák", Library: "Biblioteka Śląska"}, "Łukasz Dvořák"},
		{labels.KindPatron, labels.Label{Barcode: "P0042", Name: "Łukasz Dvořák", Library: "Biblioteka Śląska"}, "Biblioteka Śląska"},
		{labels.KindCode128, labels.Label{Barcode: "I00042", Title: "Война и мир", CallNumber: "891.73 ТОЛ"}, "Война и мир"},
		{labels.KindSpine, labels.Label{CallNumber: "891.73 ТОЛ"}, "ТОЛ"},
	} {
		t.Run(c.want, func(t *testing.T) {
			_, pdf := render(t, labels.Options{Sheet: sheet, Kind: c.kind}, []labels.Label{c.l})
			texts := pdfTexts(t, pdf)
			found := false
			for _, s := range texts {
				if s == c.want {
					found = true
				}
			}
			if !found {
				t.Errorf("the PDF shows %q, want %q among them", texts, c.want)
			}
		})
	}
}
