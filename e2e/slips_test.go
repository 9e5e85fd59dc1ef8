package e2e

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/db"
)

// Print widths in CSS pixels (96 to the inch).
const (
	// receiptWidth is what an 80 mm thermal printer prints: 72 mm.
	receiptWidth = 272
	// pageWidth is an A4 page between the browser's 10 mm print margins (190 mm),
	// narrower than Letter's.
	pageWidth = 718
	// minReceiptFontPx is 8 pt, the smallest text a thermal head prints legibly.
	minReceiptFontPx = 10.6
)

// slipLayout is what the browser laid out for a slip page printed at one width.
type slipLayout struct {
	ScrollWidth, ClientWidth float64
	// Overflowing are the elements and text that reach beyond the paper's width.
	Overflowing []string
	// Shown are the header, navigation, messages, buttons and forms still shown.
	Shown []string
	// Slips is how many .slip blocks are shown; MinFontPx their smallest text.
	Slips     int
	MinFontPx float64
	// Page is the slip's CSS named page ("receipt" on the receipt printer).
	Page string
}

// measureSlip reads the layout of the page as printed (media print) at width.
const measureSlip = `() => {
	const w = document.documentElement.clientWidth;
	const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
		(typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\s+/).join(".") : "");
	const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
	const out = { ScrollWidth: document.documentElement.scrollWidth, ClientWidth: w,
		Overflowing: [], Shown: [], Slips: 0, MinFontPx: 1000, Page: "" };
	for (const e of document.body.querySelectorAll("*")) {
		if (!shown(e)) continue;
		const r = e.getBoundingClientRect();
		if (r.width > 0 && (r.right > w + 0.5 || r.left < -0.5)) {
			out.Overflowing.push(name(e) + " [" + Math.round(r.left) + ", " + Math.round(r.right) + "]");
		}
	}
	// Text can overflow the box it is in: measure every line of it too.
	const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = texts.nextNode(); n; n = texts.nextNode()) {
		if (n.textContent.trim() === "" || !shown(n.parentElement)) continue;
		const range = document.createRange();
		range.selectNodeContents(n);
		for (const r of range.getClientRects()) {
			if (r.width > 0 && (r.right > w + 0.5 || r.left < -0.5)) {
				out.Overflowing.push("text in " + name(n.parentElement) + " [" + Math.round(r.left) + ", " + Math.round(r.right) + "]");
				break;
			}
		}
	}
	for (const e of document.querySelectorAll("header, nav, button, .button, form, input, .flash, .skip, .no-print")) {
		if (shown(e)) out.Shown.push(name(e));
	}
	for (const s of document.querySelectorAll(".slip")) {
		if (!shown(s)) continue;
		out.Slips++;
		out.Page = getComputedStyle(s).page || "";
		for (const e of [s, ...s.querySelectorAll("*")]) {
			const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== "");
			if (own && shown(e)) out.MinFontPx = Math.min(out.MinFontPx, parseFloat(getComputedStyle(e).fontSize));
		}
	}
	return out;
}`

// longWord stands in for a title with a word longer than the paper is wide (a URL,
// a chemical name): it must wrap, not overflow.
var longWord = strings.Repeat("Pneumonoultramicroscopicsilicovolcanoconiosis", 3)

// TestSlips prints every slip (due-date slip after a checkout, checkin receipt
// after a checkin, hold slip for a copy on the hold shelf) with the workstation's
// slip paper set to the 80 mm receipt printer and then to a page, as the browser
// lays out print: nothing is wider than the paper (72 mm printable on the receipt
// printer, an A4 page between margins), the header, navigation and buttons are not
// printed, text on the receipt is large enough for a thermal head, and Chromium
// makes a PDF of it (80 mm wide on the receipt printer's named page).
func TestSlips(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	page, bctx := newBrowser(t)
	_, err := page.Goto(srv.BaseURL + "/login")
	must(t, err, "opening the login page")
	login(t, page, "desk", "desk")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/$`)), "signed in")

	// The desk's work is done through the browser's own session with form posts
	// (not the Check out and Check in pages, whose layout is not this test's
	// concern): two loans for P0001, one of them returned.
	post := func(path string, form map[string]any) {
		t.Helper()
		r, err := bctx.Request().Post(srv.BaseURL+path, playwright.APIRequestContextPostOptions{Form: form})
		must(t, err, "POST %s", path)
		if !r.Ok() {
			t.Fatalf("POST %s %v: %d at %s", path, form, r.Status(), r.URL())
		}
	}
	post("/checkout/patron", map[string]any{"card": "P0001"})
	post("/checkout", map[string]any{"barcode": "I00001"})
	post("/checkout", map[string]any{"barcode": "I00002"})
	post("/checkin", map[string]any{"barcode": "I00002"})

	slips := []struct{ name, path, want string }{
		{"DueSlip", "/checkout/slip", "I00001"},
		{"CheckinReceipt", "/checkin/receipt", "I00002"},
		{"HoldSlip", "/holds/" + waitingHold(t, srv) + "/slip", "Hold for"},
	}
	for _, paper := range []struct {
		name, label string
		width       int
		receipt     bool
	}{
		{"Receipt", "80 mm receipt printer", receiptWidth, true},
		{"Page", "A4 or Letter page", pageWidth, false},
	} {
		t.Run(paper.name, func(t *testing.T) {
			setSlipPaper(t, page, srv, paper.label)
			for _, slip := range slips {
				t.Run(slip.name, func(t *testing.T) {
					must(t, page.EmulateMedia(playwright.PageEmulateMediaOptions{Media: playwright.MediaNoOverride}), "screen media")
					must(t, page.SetViewportSize(1280, 800), "a desk-sized window")
					_, err := page.Goto(srv.BaseURL + slip.path)
					must(t, err, "opening %s", slip.path)
					must(t, expect.Locator(page.Locator(".slip")).ToContainText(slip.want), "the slip at %s shows %q", slip.path, slip.want)
					// The longest title must wrap too.
					_, err = page.Evaluate(`(w) => { const c = document.querySelector(".slip td, .slip dd"); c.textContent = c.textContent + " " + w; }`, longWord)
					must(t, err, "lengthening a title")

					must(t, page.SetViewportSize(paper.width, 800), "the paper's width")
					must(t, page.EmulateMedia(playwright.PageEmulateMediaOptions{Media: playwright.MediaPrint}), "print media")
					checkSlipLayout(t, page, paper.width, paper.receipt)
					checkSlipPDF(t, page, paper.receipt)
				})
			}
		})
	}
}

// setSlipPaper chooses the slip paper on the Workstation page, reached from the
// header, and saves.
func setSlipPaper(t *testing.T, page playwright.Page, srv *server, label string) {
	t.Helper()
	must(t, page.EmulateMedia(playwright.PageEmulateMediaOptions{Media: playwright.MediaNoOverride}), "screen media")
	must(t, page.SetViewportSize(1280, 800), "a desk-sized window")
	_, err := page.Goto(srv.BaseURL + "/")
	must(t, err, "opening the start page")
	must(t, page.Locator("header").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Workstation", Exact: playwright.Bool(true)}).Click(), "clicking Workstation in the header")
	must(t, page.GetByLabel(label, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Check(), "choosing %q", label)
	must(t, button(page, "Save").Click(), "saving the workstation settings")
	must(t, expect.Locator(page.GetByText("Workstation settings saved")).ToBeVisible(), "the settings are saved")
	must(t, expect.Locator(page.GetByLabel(label, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToBeChecked(), "%q is the slip paper now", label)
	must(t, expect.Locator(page.Locator("body")).ToHaveAttribute("data-sounds", "on"), "sounds are still on")
}

// checkSlipLayout checks the page as printed at width.
func checkSlipLayout(t *testing.T, page playwright.Page, width int, receipt bool) {
	t.Helper()
	v, err := page.Evaluate(measureSlip)
	must(t, err, "measuring the printed slip")
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("measuring the printed slip: got %T", v)
	}
	num := func(k string) float64 {
		switch n := m[k].(type) {
		case int:
			return float64(n)
		case float64:
			return n
		}
		return math.NaN()
	}
	strs := func(k string) []string {
		var out []string
		list, _ := m[k].([]any)
		for _, s := range list {
			out = append(out, fmt.Sprint(s))
		}
		return out
	}
	l := slipLayout{ScrollWidth: num("ScrollWidth"), ClientWidth: num("ClientWidth"), Overflowing: strs("Overflowing"),
		Shown: strs("Shown"), Slips: int(num("Slips")), MinFontPx: num("MinFontPx"), Page: fmt.Sprint(m["Page"])}

	if l.ClientWidth != float64(width) {
		t.Errorf("the page is %v px wide, want %d", l.ClientWidth, width)
	}
	if l.ScrollWidth > l.ClientWidth {
		t.Errorf("printed at %d px, the page is %v px wide: it overflows the paper", width, l.ScrollWidth)
	}
	if len(l.Overflowing) > 0 {
		t.Errorf("printed at %d px, these reach beyond the paper: %s", width, strings.Join(l.Overflowing, "; "))
	}
	if len(l.Shown) > 0 {
		t.Errorf("printed, these are still shown: %s", strings.Join(l.Shown, ", "))
	}
	if l.Slips != 1 {
		t.Errorf("printed, %d slips shown, want 1", l.Slips)
	}
	if receipt {
		if l.MinFontPx < minReceiptFontPx {
			t.Errorf("on the receipt printer the smallest text is %.1f px, want at least %.1f (8 pt)", l.MinFontPx, minReceiptFontPx)
		}
		if l.Page != "receipt" {
			t.Errorf("the slip's CSS page is %q, want receipt", l.Page)
		}
	} else if l.Page == "receipt" {
		t.Error("slips for a page use the receipt printer's page")
	}
}

// mediaBox finds the page sizes in a PDF made by Chromium (points).
var mediaBox = regexp.MustCompile(`/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]`)

// checkSlipPDF prints the page to PDF: at 80 mm wide, and at the size the slip's
// own CSS asks for (80 mm on the receipt printer, the default paper otherwise).
func checkSlipPDF(t *testing.T, page playwright.Page, receipt bool) {
	t.Helper()
	const mm80 = 80 / 25.4 * 72 // points
	pdf, err := page.PDF(playwright.PagePdfOptions{Width: playwright.String("80mm")})
	must(t, err, "printing to an 80 mm PDF")
	if !strings.HasPrefix(string(pdf), "%PDF-") {
		t.Fatalf("the 80 mm PDF is not a PDF: %.20q", pdf)
	}
	pdf, err = page.PDF(playwright.PagePdfOptions{PreferCSSPageSize: playwright.Bool(true)})
	must(t, err, "printing to a PDF of the slip's own page size")
	boxes := mediaBox.FindAllStringSubmatch(string(pdf), -1)
	if len(boxes) == 0 {
		t.Fatal("no page sizes found in the PDF")
	}
	for i, b := range boxes {
		w, _ := strconv.ParseFloat(b[1], 64)
		if is80 := math.Abs(w-mm80) < 1; is80 != receipt {
			t.Errorf("PDF page %d is %s pt wide; 80 mm (%.0f pt) is %v, want %v", i+1, b[1], mm80, is80, receipt)
		}
	}
	if len(boxes) > 1 {
		t.Errorf("the slip prints on %d pages, want 1", len(boxes))
	}
}

// waitingHold returns the id of a hold with its copy on the hold shelf in the
// server's demo library.
func waitingHold(t *testing.T, srv *server) string {
	t.Helper()
	d, err := db.Open(srv.DB, db.Options{ReadConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var id int64
	err = d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT min(id) FROM holds WHERE status = 'waiting'`).Scan(&id)
	})
	if err != nil {
		t.Fatalf("finding a hold on the hold shelf: %v", err)
	}
	return strconv.FormatInt(id, 10)
}
