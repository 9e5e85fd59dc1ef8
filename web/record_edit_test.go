package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// itemEdit returns the edit form of the item with barcode, and the item's status.
func (e *testEnv) itemEdit(t *testing.T, barcode string) (path, status string) {
	t.Helper()
	var id int64
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT id, status FROM items WHERE barcode = ?`, barcode).Scan(&id, &status)
	})
	if err != nil {
		t.Fatalf("item %s: %v", barcode, err)
	}
	return "/items/" + strconv.FormatInt(id, 10) + "/edit", status
}

// squashed is a page's text with entities decoded and runs of white space made one
// space, for checking what a reader sees.
func squashed(body string) string {
	return strings.Join(strings.Fields(html.UnescapeString(body)), " ")
}

func TestRecordEdit(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	var recordPath string

	t.Run("ErrAnonymous", func(t *testing.T) {
		anon := e.client(t)
		for _, path := range []string{"/records/new", "/records/1/edit", "/records/1/items/new", "/items/1/edit"} {
			r := e.get(t, anon, path)
			if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/login") {
				t.Errorf("anonymous GET %s: %d to %q, want 303 to /login", path, r.Status, r.Location)
			}
		}
		r := e.post(t, anon, "/records", url.Values{"title": {"Sneaky"}})
		if r.Status != http.StatusSeeOther || r.Location != "/login" {
			t.Errorf("anonymous POST /records: %d to %q", r.Status, r.Location)
		}
	})

	t.Run("NewForm", func(t *testing.T) {
		r := e.get(t, c, "/records/new")
		if r.Status != http.StatusOK {
			t.Fatalf("GET /records/new: %d", r.Status)
		}
		mustContain(t, "the new record form", r.Body, "<h1>New record</h1>", `action="/records"`,
			`<label for="title">Title</label>`, `<label for="author">Author</label>`, `<label for="isbn">ISBN</label>`,
			`<label for="publisher">Publisher</label>`, `<label for="year">Year</label>`, `<label for="subjects">Subjects</label>`,
			`id="title" name="title"`, "Create record</button>", `aria-current="page">Search`)
		if hasInlineScript(r.Body) {
			t.Error("the form has inline script")
		}
	})

	t.Run("ErrCreateWithoutTitle", func(t *testing.T) {
		r := e.post(t, c, "/records", url.Values{"title": {"  "}, "author": {"Vantongeren, Ilse"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("no title: %d, want 422", r.Status)
		}
		if msg := fieldError(r.Body, "title"); !strings.Contains(msg, "Enter the title") {
			t.Errorf("message beside the title: %q", msg)
		}
		mustContain(t, "the refused form", r.Body, `value="Vantongeren, Ilse"`, `aria-invalid="true"`)
	})

	t.Run("Create", func(t *testing.T) {
		r := e.post(t, c, "/records", url.Values{
			"title": {"Quixotic Zeppelins"}, "author": {"Vantongeren, Ilse"}, "isbn": {"978-1-4028-9462-6"},
			"publisher": {"Airship Press"}, "year": {"2024"}, "subjects": {"Airships -- History\r\nAeronautics"},
		})
		if r.Status != http.StatusSeeOther || !regexp.MustCompile(`^/records/[0-9]+$`).MatchString(r.Location) {
			t.Fatalf("create: %d to %q, want 303 to the record", r.Status, r.Location)
		}
		recordPath = r.Location
		r = e.get(t, c, recordPath)
		mustContain(t, "the new record's page", squashed(r.Body), "<h1>Quixotic Zeppelins</h1>",
			`The record "Quixotic Zeppelins" is in the catalogue.`, "Vantongeren, Ilse", "Airship Press 2024", "9781402894626", "Airships -- History; Aeronautics")

		r = e.get(t, c, "/search?q=zeppelin")
		mustContain(t, "the search for zeppelin", r.Body, `<a href="`+recordPath+`">Quixotic Zeppelins</a>`)
	})
	if recordPath == "" {
		t.Fatal("no record to edit")
	}

	t.Run("Edit", func(t *testing.T) {
		r := e.get(t, c, recordPath+"/edit")
		if r.Status != http.StatusOK {
			t.Fatalf("GET edit: %d", r.Status)
		}
		mustContain(t, "the edit form", r.Body, "<h1>Edit record</h1>", `action="`+recordPath+`"`, `value="Quixotic Zeppelins"`,
			`value="9781402894626"`, `value="2024"`, "Airships -- History\nAeronautics</textarea>", "Save changes</button>")

		r = e.post(t, c, recordPath, url.Values{"title": {"Quixotic Dirigibles"}, "author": {"Vantongeren, Ilse"}, "year": {"twenty"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(fieldError(r.Body, "year"), "year of publication") {
			t.Fatalf("bad year: %d, message %q", r.Status, fieldError(r.Body, "year"))
		}
		mustContain(t, "the refused edit", r.Body, `value="Quixotic Dirigibles"`, `value="twenty"`)

		r = e.post(t, c, recordPath, url.Values{"title": {"Quixotic Dirigibles"}, "author": {"Vantongeren, Ilse"}, "year": {"2025"}})
		if r.Status != http.StatusSeeOther || r.Location != recordPath {
			t.Fatalf("update: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, c, recordPath)
		mustContain(t, "the edited record", squashed(r.Body), "<h1>Quixotic Dirigibles</h1>", `The changes to "Quixotic Dirigibles" are saved.`, "2025")
		if r := e.get(t, c, "/search?q=dirigibles"); !strings.Contains(r.Body, `<a href="`+recordPath+`">Quixotic Dirigibles</a>`) {
			t.Error("the new title is not found")
		}
	})

	t.Run("ErrAddItemDuplicateBarcode", func(t *testing.T) {
		r := e.get(t, c, recordPath+"/items/new")
		if r.Status != http.StatusOK {
			t.Fatalf("GET new item: %d", r.Status)
		}
		mustContain(t, "the new item form", r.Body, "<h1>Add an item</h1>", "Quixotic Dirigibles",
			`<label for="barcode">Barcode</label>`, `<label for="item_type">Item type</label>`, `<label for="home_branch">Home branch</label>`,
			`<label for="call_number">Call number</label>`, `<label for="location">Shelving location</label>`, `<label for="price">Replacement price</label>`,
			`<option value="BOOK" selected>Book</option>`, `<option value="CEN" selected>Central (CEN)</option>`, "Add item</button>")
		if strings.Contains(r.Body, `id="status"`) {
			t.Error("a new item offers a status")
		}

		r = e.post(t, c, recordPath+"/items", url.Values{"barcode": {"I00001"}, "item_type": {"BOOK"}, "home_branch": {"EAS"}, "call_number": {"629.133 VAN"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("duplicate barcode: %d, want 422", r.Status)
		}
		if msg := fieldError(r.Body, "barcode"); !strings.Contains(msg, "Barcode I00001 is already used by another item") {
			t.Errorf("message beside the barcode: %q", msg)
		}
		mustContain(t, "the refused item form", r.Body, `value="629.133 VAN"`, `<option value="EAS" selected>Eastside (EAS)</option>`)
	})

	t.Run("AddItem", func(t *testing.T) {
		r := e.post(t, c, recordPath+"/items", url.Values{"barcode": {" Q0001 "}, "item_type": {"BOOK"}, "home_branch": {"CEN"}, "call_number": {"629.133 VAN"}, "location": {" Adult non-fiction "}, "price": {"24.50"}})
		if r.Status != http.StatusSeeOther || r.Location != recordPath {
			t.Fatalf("add item: %d to %q\n%s", r.Status, r.Location, r.Body)
		}
		r = e.get(t, c, recordPath)
		mustContain(t, "the record page", squashed(r.Body), `Item Q0001 is added to "Quixotic Dirigibles", available at Central.`,
			"<td>Q0001</td>", "<td>Adult non-fiction</td>", "629.133 VAN", "Available")
		if r := e.get(t, c, "/search?q=dirigibles"); !strings.Contains(r.Body, "1 of 1") {
			t.Error("search does not count the new copy as available")
		}
	})

	t.Run("ErrLocationTooLong", func(t *testing.T) {
		path, _ := e.itemEdit(t, "Q0001")
		long := strings.Repeat("Stack ", 7)
		r := e.post(t, c, strings.TrimSuffix(path, "/edit"), url.Values{"barcode": {"Q0001"}, "item_type": {"BOOK"}, "home_branch": {"CEN"}, "call_number": {"629.133 VAN"}, "location": {long}, "price": {"24.50"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("a 42-character location: %d, want 422", r.Status)
		}
		if msg := fieldError(r.Body, "location"); !strings.Contains(msg, "at most 40 characters") {
			t.Errorf("message beside the location: %q", msg)
		}
	})

	t.Run("MarkLost", func(t *testing.T) {
		path, _ := e.itemEdit(t, "Q0001")
		r := e.get(t, c, path)
		if r.Status != http.StatusOK {
			t.Fatalf("GET item edit: %d", r.Status)
		}
		mustContain(t, "the item form", r.Body, "<h1>Edit item Q0001</h1>", `value="Q0001"`, `value="24.50"`, `value="Adult non-fiction"`,
			`<label for="status">Status</label>`, `<option value="available" selected>Available</option>`, `<option value="lost">Lost</option>`)

		action := strings.TrimSuffix(path, "/edit")
		r = e.post(t, c, action, url.Values{"barcode": {"Q0001"}, "item_type": {"BOOK"}, "home_branch": {"CEN"}, "call_number": {"629.133 VAN"}, "location": {"Adult non-fiction"}, "price": {"24.50"}, "status": {"lost"}})
		if r.Status != http.StatusSeeOther || r.Location != recordPath {
			t.Fatalf("mark lost: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, c, recordPath)
		mustContain(t, "the record page", r.Body, "The changes to item Q0001 are saved; it is lost.", "Lost")
		if _, status := e.itemEdit(t, "Q0001"); status != "lost" {
			t.Errorf("status %s, want lost", status)
		}
	})

	t.Run("ErrWithdrawOnLoan", func(t *testing.T) {
		if r := e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("checkout patron: %d", r.Status)
		}
		if r := e.post(t, c, "/checkout", url.Values{"barcode": {"I00001"}}); r.Status != http.StatusSeeOther {
			t.Fatalf("checkout I00001: %d", r.Status)
		}
		e.post(t, c, "/checkout/done", nil)

		path, _ := e.itemEdit(t, "I00001")
		r := e.get(t, c, path)
		mustContain(t, "the form of an item on loan", r.Body, "Checked out", "Check the item in at the desk")
		if strings.Contains(r.Body, `id="status"`) {
			t.Error("the form offers a status change for an item on loan")
		}

		r = e.post(t, c, strings.TrimSuffix(path, "/edit"), url.Values{"barcode": {"I00001"}, "item_type": {"BOOK"}, "home_branch": {"CEN"}, "call_number": {"FIC AUS"}, "status": {"withdrawn"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("withdraw an item on loan: %d, want 422", r.Status)
		}
		if msg := fieldError(r.Body, "status"); !strings.Contains(msg, "Item I00001 is checked out") || !strings.Contains(msg, "Check it in first") {
			t.Errorf("message beside the status: %q", msg)
		}
		if _, status := e.itemEdit(t, "I00001"); status != "on_loan" {
			t.Errorf("status %s, want on_loan", status)
		}

		// Details of an item on loan may still be edited; its status stays.
		r = e.post(t, c, strings.TrimSuffix(path, "/edit"), url.Values{"barcode": {"I00001"}, "item_type": {"BOOK"}, "home_branch": {"CEN"}, "call_number": {"FIC AUS 2"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("edit the call number of an item on loan: %d", r.Status)
		}
		if _, status := e.itemEdit(t, "I00001"); status != "on_loan" {
			t.Errorf("status %s, want on_loan", status)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		for _, path := range []string{"/records/999999/edit", "/records/abc/edit", "/records/999999/items/new", "/items/999999/edit", "/items/0/edit"} {
			if r := e.get(t, c, path); r.Status != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", path, r.Status)
			}
		}
		if r := e.post(t, c, "/records/999999", url.Values{"title": {"X"}}); r.Status != http.StatusNotFound {
			t.Errorf("update an unknown record: %d, want 404", r.Status)
		}
		r := e.post(t, c, "/records/999999/items", url.Values{"barcode": {"Q0009"}, "item_type": {"BOOK"}, "home_branch": {"CEN"}})
		if r.Status != http.StatusNotFound {
			t.Errorf("add an item to an unknown record: %d, want 404", r.Status)
		}
	})
}

// TestAddCopies: the new-item form at a scanner's pace. Enter in the Barcode field
// without JavaScript presses "Check barcode" (the form's first button), which saves
// nothing; the form comes filled in as the record's newest copy; "Save and add
// another" saves and shows the form again with the same details.
func TestAddCopies(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	r := e.post(t, c, "/records", url.Values{"title": {"Quixotic Zeppelins"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("create the record: %d", r.Status)
	}
	recordPath := r.Location
	items := func() []string {
		t.Helper()
		var out []string
		err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			rows, err := tx.Query(`SELECT i.barcode || ' ' || it.code || ' ' || b.code || ' ' || i.call_number || ' ' || i.location || ' ' || i.price_cents
				FROM items i JOIN item_types it ON it.id = i.item_type_id JOIN branches b ON b.id = i.home_branch_id
				JOIN records r ON r.id = i.record_id WHERE r.title = 'Quixotic Zeppelins' ORDER BY i.id`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					return err
				}
				out = append(out, s)
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	t.Run("NoCopiesYet", func(t *testing.T) {
		r := e.get(t, c, recordPath+"/items/new")
		mustContain(t, "the first copy's form", r.Body, `<option value="BOOK" selected>Book</option>`, `value="" maxlength="100"`,
			`name="step" value="barcode">Check barcode</button>`, `name="then" value="another">Save and add another</button>`, `data-enter-next="item_type" autofocus`)
		if i, j := strings.Index(r.Body, "Check barcode</button>"), strings.Index(r.Body, "Add item</button>"); i < 0 || j < i {
			t.Error("Check barcode is not the form's first button, the one Enter presses")
		}
		if hasInlineScript(r.Body) {
			t.Error("the form has inline script")
		}
	})

	t.Run("EnterChecksTheBarcode", func(t *testing.T) {
		r := e.post(t, c, recordPath+"/items", url.Values{"step": {"barcode"}, "barcode": {" QZ0001 "}, "item_type": {"DVD"}, "home_branch": {"EAS"}, "call_number": {""}})
		if r.Status != http.StatusOK {
			t.Fatalf("check barcode: %d, want 200", r.Status)
		}
		mustContain(t, "the form after Enter", squashed(r.Body), "No item has barcode QZ0001 yet. The item is not saved yet",
			`value="QZ0001"`, `<option value="DVD" selected>DVD</option>`, `<option value="EAS" selected>Eastside (EAS)</option>`,
			`<select id="item_type" name="item_type" autofocus>`)
		if got := items(); len(got) != 0 {
			t.Fatalf("Enter in the Barcode field saved %v", got)
		}
	})

	t.Run("ErrEnterOnABarcodeInUse", func(t *testing.T) {
		r := e.post(t, c, recordPath+"/items", url.Values{"step": {"barcode"}, "barcode": {"I00001"}, "item_type": {"BOOK"}, "home_branch": {"CEN"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("check a barcode in use: %d, want 422", r.Status)
		}
		if msg := fieldError(r.Body, "barcode"); !strings.Contains(msg, "Barcode I00001 is already used by another item") {
			t.Errorf("message beside the barcode: %q", msg)
		}
		if got := items(); len(got) != 0 {
			t.Fatalf("saved %v", got)
		}
	})

	t.Run("SaveAndAddAnother", func(t *testing.T) {
		r := e.post(t, c, recordPath+"/items", url.Values{"then": {"another"}, "barcode": {"QZ0001"}, "item_type": {"DVD"}, "home_branch": {"EAS"},
			"call_number": {"629.133 VAN"}, "location": {"Adult non-fiction"}, "price": {"24.5"}})
		if r.Status != http.StatusSeeOther || r.Location != recordPath+"/items/new?home_branch=EAS" {
			t.Fatalf("save and add another: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, c, r.Location)
		mustContain(t, "the form again", squashed(r.Body), `Item QZ0001 is added to "Quixotic Zeppelins", available at Eastside. Scan the next copy's barcode.`,
			`id="barcode" name="barcode" value=""`, `data-enter-next="item_type" autofocus`, `<option value="DVD" selected>DVD</option>`,
			`<option value="EAS" selected>Eastside (EAS)</option>`, `value="629.133 VAN"`, `value="Adult non-fiction"`, `value="24.50"`)
		if got, want := strings.Join(items(), "|"), "QZ0001 DVD EAS 629.133 VAN Adult non-fiction 2450"; got != want {
			t.Fatalf("items %q, want %q", got, want)
		}
	})

	t.Run("DefaultsFromTheNewestCopy", func(t *testing.T) {
		r := e.post(t, c, recordPath+"/items", url.Values{"barcode": {"QZ0002"}, "item_type": {"BOOK"}, "home_branch": {"CEN"}, "call_number": {"629.133 VAN c.2"}})
		if r.Status != http.StatusSeeOther || r.Location != recordPath {
			t.Fatalf("add item: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, c, recordPath+"/items/new")
		mustContain(t, "the next copy's form", r.Body, `<option value="BOOK" selected>Book</option>`, `value="629.133 VAN c.2"`,
			`<option value="CEN" selected>Central (CEN)</option>`, `id="location" name="location" value=""`, `id="price" name="price" value=""`)
	})
}

// TestRecordEditStaleBase: the quick form sends the version of the record it
// showed. Saved after the record moved on in the MARC editor, it writes only
// what it changed, so the MARC editor's save stays; a form whose version is not
// a number is refused as out of date, and saves nothing.
func TestRecordEditStaleBase(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	r := e.post(t, c, "/records", url.Values{"title": {"Quixotic Gondolas"}, "author": {"Vantongeren, Ilse"}, "year": {"2024"}, "subjects": {"Airships"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("create the record: %d", r.Status)
	}
	record := r.Location
	baseOf := func(body string) string {
		t.Helper()
		m := regexp.MustCompile(`name="base" value="([0-9]+)"`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no base in\n%s", body)
		}
		return m[1]
	}
	form := func(base, year string) url.Values {
		return url.Values{"base": {base}, "title": {"Quixotic Gondolas"}, "author": {"Vantongeren, Ilse"}, "year": {year}, "subjects": {"Airships"}}
	}

	quick := e.get(t, c, record+"/edit")
	if quick.Status != http.StatusOK {
		t.Fatalf("GET the quick form: %d", quick.Status)
	}
	stale := baseOf(quick.Body)

	// Someone saves the record in the MARC editor meanwhile: a note and a
	// subject the quick form never showed.
	ed := e.get(t, c, record+"/marc")
	text := textareaText(t, ed.Body) + "=500  \\\\$aSigned by the author.\n=650  \\0$aBallooning.\n"
	r = e.post(t, c, record+"/marc", url.Values{"marc": {text}, "base": {baseOf(ed.Body)}, "step": {"save"}})
	if r.Status != http.StatusSeeOther || r.Location != record {
		t.Fatalf("save in the MARC editor: %d to %q\n%s", r.Status, r.Location, r.Body)
	}
	if now := baseOf(e.get(t, c, record+"/edit").Body); now == stale {
		t.Fatalf("the MARC editor's save left the version at %s", now)
	}

	t.Run("ErrMalformedBase", func(t *testing.T) {
		for _, base := range []string{"abc", "-1", "2.5"} {
			r := e.post(t, c, record, form(base, "2030"))
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("base %q: %d, want 422", base, r.Status)
			}
			mustContain(t, "the refused form", squashed(r.Body), `role="alert">This form is out of date, so nothing is saved: reload the record's edit form`, `value="2030"`)
		}
		if r := e.get(t, c, record+"/edit"); strings.Contains(r.Body, `value="2030"`) {
			t.Error("a form with a malformed base was saved")
		}
	})

	t.Run("ErrMalformedBaseMARC", func(t *testing.T) {
		text := textareaText(t, e.get(t, c, record+"/marc").Body) + "=500  \\\\$aNever saved.\n"
		for _, base := range []string{"abc", "-1"} {
			r := e.post(t, c, record+"/marc", url.Values{"marc": {text}, "base": {base}, "step": {"save"}})
			if r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("base %q: %d, want 422", base, r.Status)
			}
			mustContain(t, "the refused MARC", squashed(r.Body), "This form is out of date, so nothing is saved", "Never saved.")
			if strings.Contains(r.Body, "saved by someone else") {
				t.Errorf("base %q: told of someone else's save", base)
			}
		}
		if text := textareaText(t, e.get(t, c, record+"/marc").Body); strings.Contains(text, "Never saved.") {
			t.Error("a MARC edit with a malformed base was saved")
		}
	})

	t.Run("StaleBase", func(t *testing.T) {
		r := e.post(t, c, record, form(stale, "2025"))
		if r.Status != http.StatusSeeOther || r.Location != record {
			t.Fatalf("save the quick form over a newer version: %d to %q\n%s", r.Status, r.Location, r.Body)
		}
		r = e.get(t, c, record+"/edit")
		mustContain(t, "the quick form after both saves", r.Body, `value="2025"`, "Ballooning")
		if text := textareaText(t, e.get(t, c, record+"/marc").Body); !strings.Contains(text, "Signed by the author.") || !strings.Contains(text, "Ballooning") {
			t.Errorf("the quick form's save overwrote the MARC editor's:\n%s", text)
		}
	})
}
