package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestLabels: the form, a preview of item labels (SVG sheets), the PDF, patron
// cards, and bad input answered beside its field.
func TestLabels(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	if r := e.get(t, c, "/reports/labels"); r.Status != http.StatusOK || !strings.Contains(r.Body, "Label sheet") {
		t.Fatalf("form: %d", r.Status)
	}
	q := url.Values{"kind": {"code128"}, "sheet": {"letter-3x10"}, "source": {"barcodes"}, "barcodes": {"I00001\nI00002, I00010"}, "start": {"2"}}
	r := e.get(t, c, "/reports/labels/preview?"+q.Encode())
	if r.Status != http.StatusOK || strings.Count(r.Body, "data-barcode-label") != 3 || !strings.Contains(r.Body, `class="label-bar"`) {
		t.Fatalf("preview: %d", r.Status)
	}
	if hasInlineScript(r.Body) || strings.Contains(r.Body, "style=") {
		t.Error("the preview has inline script or style (the CSP refuses them)")
	}
	pdf := e.get(t, c, "/reports/labels/pdf?"+q.Encode())
	if pdf.Status != http.StatusOK || pdf.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(pdf.Body, "%PDF-") {
		t.Fatalf("pdf: %d %s", pdf.Status, pdf.Header.Get("Content-Type"))
	}
	cards := url.Values{"kind": {"patron"}, "sheet": {"a4-3x7"}, "barcodes": {"P0001 P0003"}}
	if r := e.get(t, c, "/reports/labels/preview?"+cards.Encode()); r.Status != http.StatusOK || !strings.Contains(r.Body, "Casey Waiting") {
		t.Errorf("patron cards: %d", r.Status)
	}
	for name, bad := range map[string]url.Values{
		"UnknownBarcode": {"kind": {"spine"}, "sheet": {"a4-3x7"}, "barcodes": {"NOSUCH1"}},
		"NoSheet":        {"kind": {"spine"}, "sheet": {"b5"}, "barcodes": {"I00001"}},
		"CustomTooWide":  {"kind": {"spine"}, "sheet": {"custom"}, "page": {"a4"}, "cols": {"4"}, "rows": {"7"}, "label_w": {"63.5"}, "label_h": {"38.1"}, "left": {"7"}, "top": {"15"}, "pitch_x": {"66"}, "pitch_y": {"38.1"}, "barcodes": {"I00001"}},
		"BadSince":       {"kind": {"spine"}, "sheet": {"a4-3x7"}, "source": {"since"}, "since": {"last week"}},
		"NoLabels":       {"kind": {"spine"}, "sheet": {"a4-3x7"}, "barcodes": {""}},
	} {
		if r := e.get(t, c, "/reports/labels/preview?"+bad.Encode()); r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, `class="field-error"`) {
			t.Errorf("%s: %d", name, r.Status)
		}
	}
	// A barcode Code 39 cannot draw (lower case), on a valid start: refused for
	// that reason, with a message that names Code 39. Code 128 draws it.
	if err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE items SET barcode = 'i00001x' WHERE barcode = 'I00001'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	code39 := url.Values{"kind": {"code39"}, "sheet": {"a4-3x7"}, "barcodes": {"i00001x"}, "start": {"2"}}
	if r := e.get(t, c, "/reports/labels/preview?"+code39.Encode()); r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "i00001x cannot be drawn in Code 39") {
		t.Errorf("lower case in Code 39: %d", r.Status)
	}
	code39.Set("kind", "code128")
	if r := e.get(t, c, "/reports/labels/preview?"+code39.Encode()); r.Status != http.StatusOK {
		t.Errorf("the same barcode in Code 128: %d", r.Status)
	}
	since := url.Values{"kind": {"spine"}, "sheet": {"a4-3x8"}, "source": {"since"}, "since": {"2000-01-01"}, "branch": {"1"}}
	if r := e.get(t, c, "/reports/labels/preview?"+since.Encode()); r.Status != http.StatusOK {
		t.Errorf("items added since: %d", r.Status)
	}
}

// TestLabelsFromRecord: the record page ticks copies for spine labels; the
// labels form opens with the copies ticked, one a line, on the usual sheet.
func TestLabelsFromRecord(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	var recID int64
	e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT record_id FROM items WHERE barcode = 'I00010'`).Scan(&recID)
	})
	rec := e.get(t, c, "/records/"+strconv.FormatInt(recID, 10)).Body
	for _, want := range []string{`<form id="record-labels" method="get" action="/reports/labels"`,
		`<input type="checkbox" name="barcodes" value="I00010" form="record-labels" aria-label="Spine label for I00010">`,
		">Spine labels for the items ticked</button>"} {
		if !strings.Contains(rec, want) {
			t.Errorf("the record page lacks %s", want)
		}
	}
	r := e.get(t, c, "/reports/labels?kind=spine&source=barcodes&barcodes=I00010&barcodes=I00011")
	if r.Status != http.StatusOK {
		t.Fatalf("labels form: %d", r.Status)
	}
	for _, want := range []string{">I00010\nI00011</textarea>", `<option value="a4-3x7" selected>`, `id="start" name="start" min="1" value="1"`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("the labels form lacks %q", want)
		}
	}
}
