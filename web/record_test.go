package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

func TestPlaceHoldFromRecord(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	var recID, itemID int64
	e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT record_id, id FROM items WHERE barcode = 'I00010'`).Scan(&recID, &itemID)
	})
	rec := "/records/" + strconv.FormatInt(recID, 10)

	r := e.get(t, c, rec)
	if r.Status != 200 || !strings.Contains(r.Body, ">Place hold</a>") || !strings.Contains(r.Body, "Nobody is waiting") {
		t.Fatalf("record page: %d", r.Status)
	}
	r = e.get(t, c, rec+"/hold")
	for _, want := range []string{`<label for="card">Card number</label>`, `<label for="pickup">Pickup branch</label>`, ">Place hold</button>", `<option value="CEN" selected>`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("place hold form lacks %q", want)
		}
	}

	t.Run("OK", func(t *testing.T) {
		r := e.post(t, c, rec+"/hold", url.Values{"card": {"P0003"}, "pickup": {"CEN"}})
		if r.Status != http.StatusSeeOther || r.Location != rec {
			t.Fatalf("place: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, c, rec)
		if !strings.Contains(r.Body, "Hold placed for Casey Waiting (P0003)") || !strings.Contains(r.Body, "Holds (1)") {
			t.Fatalf("no Hold placed message or queue:\n%s", r.Body)
		}
	})

	t.Run("WarnAlreadyHolds", func(t *testing.T) {
		r := e.post(t, c, rec+"/hold", url.Values{"card": {"P0003"}, "pickup": {"CEN"}})
		if r.Status != http.StatusConflict || !strings.Contains(r.Body, "already has a hold") || !strings.Contains(r.Body, "Place hold anyway") {
			t.Fatalf("second hold: %d, want a warning to confirm", r.Status)
		}
		r = e.post(t, c, rec+"/hold", url.Values{"card": {"P0003"}, "pickup": {"CEN"}, "confirm": {"already_holds"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("confirmed: %d", r.Status)
		}
		if r := e.get(t, c, rec); !strings.Contains(r.Body, "Holds (2)") {
			t.Fatal("the confirmed hold is not in the queue")
		}
	})

	t.Run("ItemLevel", func(t *testing.T) {
		r := e.get(t, c, rec+"/hold?item="+strconv.FormatInt(itemID, 10))
		if !strings.Contains(r.Body, "copy I00010 only") {
			t.Fatal("the form does not name the copy")
		}
		r = e.post(t, c, rec+"/hold", url.Values{"card": {"P0001"}, "pickup": {"EAS"}, "item": {strconv.FormatInt(itemID, 10)}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("item-level hold: %d\n%s", r.Status, r.Body)
		}
		var n int
		e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM holds WHERE item_id = ? AND status = 'queued'`, itemID).Scan(&n)
		})
		if n != 1 {
			t.Fatalf("%d item-level holds, want 1", n)
		}
	})

	for name, tc := range map[string]struct {
		card, want string
		status     int
	}{
		"ErrUnknownCard": {"P9999", "No patron has card number", http.StatusUnprocessableEntity},
		"ErrExpired":     {"P0004", "Card P0004 expired on", http.StatusConflict},
		"ErrBlocked":     {"P0005", "Emery Barred is blocked by staff", http.StatusConflict},
		"ErrEmpty":       {"", "card", http.StatusUnprocessableEntity},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.post(t, c, rec+"/hold", url.Values{"card": {tc.card}, "pickup": {"CEN"}})
			if r.Status != tc.status || !strings.Contains(r.Body, tc.want) || !strings.Contains(r.Body, "field-error") {
				t.Fatalf("card %q: %d, want %d with %q beside the field", tc.card, r.Status, tc.status, tc.want)
			}
		})
	}
	if r := e.get(t, c, "/records/99999/hold"); r.Status != http.StatusNotFound {
		t.Errorf("hold on an unknown record: %d", r.Status)
	}
}

// TestRecordLinks: the record page shows each 856 $u of the kept MARC as a
// link reading its $y, $3 or $z, and a URL that is not http or https as text.
func TestRecordLinks(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	var recID int64
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		if err := tx.QueryRow(`SELECT record_id FROM items WHERE barcode = 'I00010'`).Scan(&recID); err != nil {
			return err
		}
		return catalog.SaveMARC(tx, stacks.Actor{Name: "test"}, recID, linkedRecord())
	})
	if err != nil {
		t.Fatal(err)
	}
	body := e.get(t, c, "/records/"+strconv.FormatInt(recID, 10)).Body
	for _, want := range []string{
		`<a href="https://ebooks.example.org/darkness">Read the e-book</a>`,
		`<a href="http://example.org/toc">Table of contents</a>`,
		`<span class="muted"> (Members only)</span>`,
		`<a href="https://example.org/review">Review in the Gazette</a>`,
		`<a href="https://example.org/bare">https://example.org/bare</a>`,
		`Unsafe: javascript:alert(1)`,
		`ftp://example.org/file`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the record page lacks %s", want)
		}
	}
	for _, bad := range []string{`href="javascript:`, `href="ftp:`} {
		if strings.Contains(body, bad) {
			t.Errorf("the record page links %s", bad)
		}
	}
}

// linkedRecord is a record with electronic resources: 856 fields with link
// text, materials, a public note, a bare URL and two URLs that are no web
// links.
func linkedRecord() *marc.Record {
	f := func(subs ...string) marc.Field {
		fl := marc.Field{Tag: "856", Ind1: '4', Ind2: '0'}
		for i := 0; i+1 < len(subs); i += 2 {
			fl.Subfields = append(fl.Subfields, marc.Subfield{Code: subs[i][0], Value: subs[i+1]})
		}
		return fl
	}
	return &marc.Record{Leader: "00000nam a2200000 i 4500", Fields: []marc.Field{
		{Tag: "245", Ind1: '1', Ind2: '4', Subfields: []marc.Subfield{{Code: 'a', Value: "The left hand of darkness"}}},
		f("u", "https://ebooks.example.org/darkness", "y", "Read the e-book"),
		f("3", "Table of contents", "u", "http://example.org/toc", "z", "Members only"),
		f("u", "https://example.org/review", "z", "Review in the Gazette"),
		f("u", "https://example.org/bare"),
		f("u", "javascript:alert(1)", "y", "Unsafe"),
		f("u", "ftp://example.org/file"),
	}}
}
