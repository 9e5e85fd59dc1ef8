package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// editForm is the patron edit form as the browser sends it for the patron with
// card, with the message for the desk set to msg.
func (e *testEnv) editForm(t *testing.T, card, msg string) url.Values {
	t.Helper()
	var p *patrons.Patron
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) (err error) { p, err = patrons.FindByCard(tx, card); return err }); err != nil {
		t.Fatal(err)
	}
	return url.Values{"card": {p.Card}, "surname": {p.Surname}, "first_name": {p.FirstName}, "email": {p.Email},
		"phone": {p.Phone}, "address": {p.Address}, "category": {p.CategoryCode}, "home_branch": {p.HomeBranchCode},
		"notes": {p.Notes}, "desk_message": {msg}}
}

// TestPatronDeskMessage: staff leave a message for the desk in the edit form; the
// patron page shows it with "Dismiss" until someone dismisses it, which is audited
// and goes back to the safe "return" path.
func TestPatronDeskMessage(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	page := e.patronPath(t, "P0001")

	t.Run("EditForm", func(t *testing.T) {
		r := e.get(t, c, page+"/edit")
		mustContain(t, "the edit form", r.Body, `<label for="desk_message">Message for the desk</label>`,
			`<textarea id="desk_message" name="desk_message"`, `aria-describedby="desk_message-help"`)
		if strings.Contains(e.get(t, c, page).Body, "desk-message") {
			t.Error("the patron page shows a message for the desk before any is left")
		}
	})

	t.Run("ErrTooLongKeepsTheForm", func(t *testing.T) {
		f := e.editForm(t, "P0001", strings.Repeat("m", 501))
		f.Set("email", "alex.new@example.org")
		r := e.post(t, c, page, f)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "desk_message"), "500 characters") {
			t.Fatalf("overlong message: %d, want 422 with the message beside the field", r.Status)
		}
		mustContain(t, "the refused form", r.Body, `value="alex.new@example.org"`, strings.Repeat("m", 501),
			`aria-describedby="desk_message-help desk_message-error"`)
	})

	t.Run("Saved", func(t *testing.T) {
		r := e.post(t, c, page, e.editForm(t, "P0001", "  Has a parcel waiting: <ask at Eastside>  "))
		if r.Status != http.StatusSeeOther || r.Location != page {
			t.Fatalf("save: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, c, page)
		mustContain(t, "the patron page", r.Body, `<h2 id="desk-message-h">Message for the desk</h2>`,
			`<p class="desk-message-text">Has a parcel waiting: &lt;ask at Eastside&gt;</p>`,
			`action="`+page+`/desk-message/dismiss"`, ">Dismiss</button>")
		mustContain(t, "the edit form", e.get(t, c, page+"/edit").Body, ">Has a parcel waiting: &lt;ask at Eastside&gt;</textarea>")
	})

	t.Run("DismissReturnsToCheckout", func(t *testing.T) {
		r := e.post(t, c, page+"/desk-message/dismiss", url.Values{"return": {"/checkout"}})
		if r.Status != http.StatusSeeOther || r.Location != "/checkout" {
			t.Fatalf("dismiss: %d to %q, want 303 to /checkout", r.Status, r.Location)
		}
		mustContain(t, "Check out after dismissing", e.get(t, c, "/checkout").Body, "The message for the desk is dismissed.")
		if strings.Contains(e.get(t, c, page).Body, "Has a parcel waiting") {
			t.Error("the patron page still shows the dismissed message")
		}
		var action, detail string
		err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT action, detail FROM audit_log WHERE object_type = 'patron' AND object_id = ?
				ORDER BY id DESC LIMIT 1`, strings.TrimPrefix(page, "/patrons/")).Scan(&action, &detail)
		})
		if err != nil || action != "patron.dismiss_desk_message" || detail != "Has a parcel waiting: <ask at Eastside>" {
			t.Errorf("last audit row %q %q (%v)", action, detail, err)
		}
	})

	t.Run("DismissUnsafeReturnGoesToPatron", func(t *testing.T) {
		e.post(t, c, page, e.editForm(t, "P0001", "Ask for the new address."))
		for _, back := range []string{"", "//evil.example/", "https://evil.example/", "/\\evil.example"} {
			r := e.post(t, c, page+"/desk-message/dismiss", url.Values{"return": {back}})
			if r.Status != http.StatusSeeOther || r.Location != page {
				t.Errorf("return %q: %d to %q, want 303 to the patron page", back, r.Status, r.Location)
			}
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		if r := e.post(t, c, "/patrons/999999/desk-message/dismiss", nil); r.Status != http.StatusNotFound || !strings.Contains(r.Body, "There is no patron") {
			t.Fatalf("dismiss for an unknown patron: %d", r.Status)
		}
	})

	t.Run("NeedsLogin", func(t *testing.T) {
		r := e.post(t, e.client(t), page+"/desk-message/dismiss", nil)
		if r.Status != http.StatusSeeOther || r.Location != "/login" {
			t.Fatalf("anonymous dismiss: %d to %q", r.Status, r.Location)
		}
	})
}

// TestPlaceHoldByName: the record's Place hold form takes a patron's name in the
// "Card number" field. One match places the hold; several are listed with
// "Choose", which sends the form again with the chosen card and the pickup branch
// as set; none says so beside the field.
func TestPlaceHoldByName(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	var recID int64
	e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT record_id FROM items WHERE barcode = 'I00009'`).Scan(&recID)
	})
	rec := "/records/" + strconv.FormatInt(recID, 10)
	// Two patrons with the same surname.
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		for _, in := range []patrons.Input{
			{Card: "T0001", Surname: "Twin", FirstName: "Ann", CategoryCode: "ADULT", HomeBranchCode: "CEN"},
			{Card: "T0002", Surname: "Twin", FirstName: "Bob", CategoryCode: "CHILD", HomeBranchCode: "WES"},
		} {
			if _, err := patrons.Create(tx, stacks.System, in); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	holdFor := func(card string) (pickup string) {
		t.Helper()
		e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT b.code FROM holds h JOIN patrons p ON p.id = h.patron_id JOIN branches b ON b.id = h.pickup_branch_id
				WHERE p.card = ? AND h.record_id = ? AND h.status = 'queued'`, card, recID).Scan(&pickup)
		})
		return pickup
	}

	t.Run("Form", func(t *testing.T) {
		mustContain(t, "the place hold form", e.get(t, c, rec+"/hold").Body, `<label for="card">Card number</label>`,
			`<p class="muted" id="card-help">or the patron's name</p>`, `aria-describedby="card-help"`)
	})

	t.Run("OneMatch", func(t *testing.T) {
		r := e.post(t, c, rec+"/hold", url.Values{"card": {"casey waiting"}, "pickup": {"CEN"}})
		if r.Status != http.StatusSeeOther || r.Location != rec {
			t.Fatalf("place by name: %d to %q\n%s", r.Status, r.Location, r.Body)
		}
		mustContain(t, "the record after", e.get(t, c, rec).Body, "Hold placed for Casey Waiting (P0003)")
	})

	t.Run("SeveralMatchesThenChoose", func(t *testing.T) {
		r := e.post(t, c, rec+"/hold", url.Values{"card": {"twin"}, "pickup": {"EAS"}})
		if r.Status != http.StatusOK {
			t.Fatalf("several matches: %d, want 200 with the list", r.Status)
		}
		mustContain(t, "the list of matches", r.Body, "Patrons matching “twin”",
			"<td>Twin, Ann</td>", "<td>T0001</td>", "<td>Adult</td>", "<td>Central</td>",
			"<td>Twin, Bob</td>", "<td>T0002</td>", "<td>Child</td>", "<td>Westside</td>",
			`name="choose" value="T0002"`, ">Choose</button>", `<option value="EAS" selected>`, `value="twin"`)
		if strings.Index(r.Body, ">Place hold</button>") > strings.Index(r.Body, ">Choose</button>") {
			t.Error(`"Choose" comes before "Place hold": Enter in the card field would choose the first patron`)
		}
		if holdFor("T0001") != "" || holdFor("T0002") != "" {
			t.Fatal("a hold was placed before a patron was chosen")
		}
		r = e.post(t, c, rec+"/hold", url.Values{"card": {"twin"}, "pickup": {"EAS"}, "choose": {"T0002"}})
		if r.Status != http.StatusSeeOther || r.Location != rec {
			t.Fatalf("choose: %d to %q\n%s", r.Status, r.Location, r.Body)
		}
		mustContain(t, "the record after choosing", e.get(t, c, rec).Body, "Hold placed for Bob Twin (T0002)", "pickup at Eastside")
		if got := holdFor("T0002"); got != "EAS" {
			t.Errorf("Bob Twin's hold is picked up at %q, want EAS", got)
		}
	})

	t.Run("ErrNoMatch", func(t *testing.T) {
		r := e.post(t, c, rec+"/hold", url.Values{"card": {"nobody by this name"}, "pickup": {"WES"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("no match: %d, want 422", r.Status)
		}
		mustContain(t, "the refused form", r.Body, `<p class="field-error" id="card-error" role="alert">`,
			"no patron&#39;s name matches", "Patrons page", `value="nobody by this name"`, `<option value="WES" selected>`,
			`aria-describedby="card-help card-error"`)
	})
}
