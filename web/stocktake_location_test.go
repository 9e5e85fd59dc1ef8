package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestStocktakeByLocationForm: the Stocktake form offers the locations in use,
// grouped by branch; a location stocktake starts from it (no call numbers),
// names the location in its heading, and says an item from another location is
// on the wrong shelf; an unknown location, or a range and a location both, is
// a 422 with the message beside the location.
func TestStocktakeByLocationForm(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	form := e.get(t, c, "/reports/stocktake")
	for _, want := range []string{`<label for="location">`, `<optgroup label="Central">`, `<option value="Reference">Reference</option>`, `<option value="Children">Children</option>`} {
		if !strings.Contains(form.Body, want) {
			t.Errorf("the form lacks %s", want)
		}
	}
	var onShelf, elsewhere string
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		if err := tx.QueryRow(`SELECT barcode FROM items WHERE home_branch_id = 1 AND location = 'Children' AND status = 'available' LIMIT 1`).Scan(&onShelf); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT barcode FROM items WHERE home_branch_id = 1 AND location = 'Adult fiction' AND status = 'available' LIMIT 1`).Scan(&elsewhere)
	}); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]url.Values{
		"Unknown": {"branch": {"1"}, "location": {"Basement"}},
		"Both":    {"branch": {"1"}, "from": {"FIC A"}, "location": {"Children"}},
	} {
		r := e.post(t, c, "/reports/stocktake", f)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, `id="location-error"`) {
			t.Errorf("%s: %d, no message beside the location", name, r.Status)
		}
	}
	r := e.post(t, c, "/reports/stocktake", url.Values{"branch": {"1"}, "from": {""}, "to": {""}, "location": {"Children"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	st := r.Location
	if page := e.get(t, c, st); !strings.Contains(page.Body, "Stocktake: Children at Central") {
		t.Errorf("the scan page's heading does not name the location")
	}
	for _, b := range []string{onShelf, elsewhere} {
		if r := e.post(t, c, st+"/scan", url.Values{"barcode": {b}}); r.Status != http.StatusSeeOther {
			t.Fatalf("scan %s: %d", b, r.Status)
		}
	}
	res := e.get(t, c, st+"/results")
	if !strings.Contains(res.Body, "Wrong shelf: belongs at Central, Adult fiction") {
		t.Errorf("the results do not put %s on the wrong shelf", elsewhere)
	}
	if form := e.get(t, c, "/reports/stocktake"); !strings.Contains(form.Body, "Children at Central") {
		t.Error("the recent stocktakes do not list it")
	}
}
