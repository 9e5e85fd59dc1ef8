package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// adminEnv is newEnv plus what the rule and calendar forms choose from: patron
// categories Adult and Child, item types Book and DVD, and a second branch, East.
type adminEnv struct {
	*testEnv
	Admin *http.Client
	IDs   map[string]int64 // by code: ADULT, CHILD, BOOK, DVD, CEN, EAS
}

func newAdminEnv(t *testing.T) *adminEnv {
	t.Helper()
	e := newEnv(t)
	ids := map[string]int64{}
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		for _, q := range []string{
			`INSERT INTO patron_categories (code, name) VALUES ('ADULT', 'Adult'), ('CHILD', 'Child')`,
			`INSERT INTO item_types (code, name) VALUES ('BOOK', 'Book'), ('DVD', 'DVD')`,
			`INSERT INTO branches (code, name) VALUES ('EAS', 'East')`,
		} {
			if _, err := tx.Exec(q); err != nil {
				return err
			}
		}
		rows, err := tx.Query(`SELECT code, id FROM patron_categories UNION ALL SELECT code, id FROM item_types
			UNION ALL SELECT code, id FROM branches`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var code string
			var id int64
			if err := rows.Scan(&code, &id); err != nil {
				return err
			}
			ids[code] = id
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	c := e.client(t)
	if r := e.login(t, c, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("admin login: %d", r.Status)
	}
	return &adminEnv{testEnv: e, Admin: c, IDs: ids}
}

func (e *adminEnv) id(code string) string { return strconv.FormatInt(e.IDs[code], 10) }

// count runs a count(*) query.
func (e *testEnv) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(query, args...).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// ruleForm is a valid rule for Adult / Book / any branch.
func (e *adminEnv) ruleForm() url.Values {
	return url.Values{
		"patron_category_id": {e.id("ADULT")},
		"item_type_id":       {e.id("BOOK")},
		"branch_id":          {"0"},
		"loan_period":        {"21"},
		"loan_unit":          {"days"},
		"max_loans":          {"12"},
		"renewals":           {"3"},
		"fine":               {"0.25"},
		"grace_periods":      {"2"},
		"fine_cap":           {"5.00"},
		"hold_pickup_days":   {"7"},
	}
}

func adminWith(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// adminFieldMsg returns the message shown beside the field whose id is given.
func adminFieldMsg(body, id string) string {
	m := regexp.MustCompile(`<p class="field-error" id="` + regexp.QuoteMeta(id) + `-error">([^<]*)</p>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

var (
	adminControlRE = regexp.MustCompile(`<(?:input|select|textarea)\b[^>]*>`)
	adminIDRE      = regexp.MustCompile(`\bid="([^"]+)"`)
)

// adminCheckLabels fails when a visible form control on the page lacks a <label for>,
// or the page carries inline script.
func adminCheckLabels(t *testing.T, page, body string) {
	t.Helper()
	for _, ctl := range adminControlRE.FindAllString(body, -1) {
		if strings.Contains(ctl, `type="hidden"`) {
			continue
		}
		m := adminIDRE.FindStringSubmatch(ctl)
		if m == nil {
			t.Errorf("%s: control without an id: %s", page, ctl)
			continue
		}
		if !strings.Contains(body, `<label for="`+m[1]+`"`) {
			t.Errorf("%s: control %q has no <label for>", page, m[1])
		}
	}
	if hasInlineScript(body) {
		t.Errorf("%s carries inline script", page)
	}
}

func TestAdminForbiddenToCirculationStaff(t *testing.T) {
	e := newAdminEnv(t)
	// Something for the forged posts to hit.
	if r := e.post(t, e.Admin, "/admin/rules", e.ruleForm()); r.Status != http.StatusSeeOther {
		t.Fatalf("create rule: %d", r.Status)
	}
	if r := e.post(t, e.Admin, "/admin/calendar/days", url.Values{"day": {"2026-12-25"}, "branch_id": {"0"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("add closed day: %d", r.Status)
	}
	var ruleID, dayID int64
	e.DB.Read(context.Background(), func(tx *db.Tx) error {
		tx.QueryRow(`SELECT id FROM circ_rules`).Scan(&ruleID)
		return tx.QueryRow(`SELECT id FROM closed_days`).Scan(&dayID)
	})
	rule, day, cen := strconv.FormatInt(ruleID, 10), strconv.FormatInt(dayID, 10), e.id("CEN")

	desk := e.client(t)
	e.login(t, desk, "desk", "desk")
	for _, path := range []string{"/admin", "/admin/", "/admin/rules", "/admin/rules/new", "/admin/rules/" + rule,
		"/admin/calendar", "/admin/preferences", "/admin/no/such/page"} {
		r := e.get(t, desk, path)
		if r.Status != http.StatusForbidden || !strings.Contains(r.Body, "for administrators") {
			t.Errorf("circulation GET %s: %d, want 403 with the reason", path, r.Status)
		}
	}
	for path, form := range map[string]url.Values{
		"/admin/rules":                            e.ruleForm(),
		"/admin/rules/" + rule:                    adminWith(e.ruleForm(), "max_loans", "99"),
		"/admin/rules/" + rule + "/delete":        nil,
		"/admin/calendar/branches/" + cen:         {"closed_weekdays": {"1", "2"}, "closes_at": {"12:00"}},
		"/admin/calendar/days":                    {"day": {"2026-12-26"}, "branch_id": {"0"}},
		"/admin/calendar/days/" + day + "/delete": nil,
		"/admin/preferences":                      {"library_name": {"Hacked"}, "fines_limit": {"999"}, "timezone": {"UTC"}},
	} {
		if r := e.post(t, desk, path, form); r.Status != http.StatusForbidden {
			t.Errorf("circulation POST %s: %d, want 403", path, r.Status)
		}
	}
	// Nothing changed.
	if n := e.count(t, `SELECT count(*) FROM circ_rules WHERE max_loans = 12`); n != 1 {
		t.Errorf("the rule was changed or deleted by a circulation user (%d rules as created)", n)
	}
	if n := e.count(t, `SELECT count(*) FROM closed_days`); n != 1 {
		t.Errorf("%d closed days, want the 1 the administrator added", n)
	}
	if n := e.count(t, `SELECT count(*) FROM branches WHERE closed_weekdays = '12'`); n != 0 {
		t.Error("a circulation user changed a branch's hours")
	}
	if n := e.count(t, `SELECT count(*) FROM preferences WHERE value = 'Hacked'`); n != 0 {
		t.Error("a circulation user changed the preferences")
	}
}

func TestAdminIndex(t *testing.T) {
	e := newAdminEnv(t)
	r := e.get(t, e.Admin, "/admin")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /admin: %d", r.Status)
	}
	for _, want := range []string{"<h1>Administration</h1>", `href="/admin/rules"`, `href="/admin/calendar"`, `href="/admin/preferences"`,
		`<a href="/admin" aria-current="page">Administration</a>`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("administration page lacks %s", want)
		}
	}
	for _, path := range []string{"/admin/rules", "/admin/rules/new", "/admin/calendar", "/admin/preferences"} {
		r := e.get(t, e.Admin, path)
		if r.Status != http.StatusOK {
			t.Errorf("GET %s: %d", path, r.Status)
		}
		adminCheckLabels(t, path, r.Body)
	}
}

func TestAdminRules(t *testing.T) {
	e := newAdminEnv(t)
	ruleID := func(t *testing.T) string {
		t.Helper()
		var id int64
		if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT id FROM circ_rules WHERE patron_category_id = ? AND item_type_id = ? AND branch_id IS NULL`,
				e.IDs["ADULT"], e.IDs["BOOK"]).Scan(&id)
		}); err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(id, 10)
	}

	t.Run("NewForm", func(t *testing.T) {
		r := e.get(t, e.Admin, "/admin/rules/new")
		for _, want := range []string{`<option value="0" selected>Any</option>`, "Adult (ADULT)", "Book (BOOK)", "East (EAS)",
			`<label for="fine">`, `name="fine_cap"`} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("new rule form lacks %s", want)
			}
		}
	})

	t.Run("Create", func(t *testing.T) {
		r := e.post(t, e.Admin, "/admin/rules", e.ruleForm())
		if r.Status != http.StatusSeeOther || r.Location != "/admin/rules" {
			t.Fatalf("create rule: %d to %q, want 303 to /admin/rules", r.Status, r.Location)
		}
		// A catch-all rule too.
		r = e.post(t, e.Admin, "/admin/rules", adminWith(e.ruleForm(), "patron_category_id", "0", "item_type_id", "0", "loan_period", "1", "fine", "0", "fine_cap", "0"))
		if r.Status != http.StatusSeeOther {
			t.Fatalf("create catch-all rule: %d: %s", r.Status, r.Body)
		}
		r = e.get(t, e.Admin, "/admin/rules")
		for _, want := range []string{"Rule saved: Adult, Book, any branch.", "<td>Adult</td><td>Book</td><td>Any</td>",
			"21 days", "0.25 per day", "2 days", "5.00", "<td>Any</td><td>Any</td><td>Any</td>", "1 day<", "No cap",
			`href="/admin/rules/` + ruleID(t) + `"`, `href="/admin/rules/new"`} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("rule list lacks %s", want)
			}
		}
		if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'rule.save' AND actor = 'admin'`); n != 2 {
			t.Errorf("%d rule.save audit entries, want 2", n)
		}
	})

	t.Run("ErrDuplicateScope", func(t *testing.T) {
		r := e.post(t, e.Admin, "/admin/rules", adminWith(e.ruleForm(), "max_loans", "40"))
		if r.Status != http.StatusConflict || !strings.Contains(r.Body, "already exists") || !strings.Contains(r.Body, `<a href="/admin/rules/`+ruleID(t)+`">Edit the existing rule</a>`) {
			t.Fatalf("duplicate scope: %d, want 409 with a message", r.Status)
		}
		if !strings.Contains(r.Body, `value="40"`) {
			t.Error("the refused form lost what was typed")
		}
		if n := e.count(t, `SELECT count(*) FROM circ_rules`); n != 2 {
			t.Errorf("%d rules, want 2", n)
		}
	})

	t.Run("ErrInvalidNumbers", func(t *testing.T) {
		r := e.post(t, e.Admin, "/admin/rules", adminWith(e.ruleForm(), "item_type_id", e.id("DVD"),
			"loan_period", "two weeks", "fine", "0.255", "max_loans", ""))
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("invalid numbers: %d, want 422", r.Status)
		}
		for field, want := range map[string]string{"loan_period": "whole number", "fine": "amount", "max_loans": "whole number"} {
			if msg := adminFieldMsg(r.Body, field); !strings.Contains(msg, want) {
				t.Errorf("message beside %s: %q, want one about a %s", field, msg, want)
			}
		}
		if !strings.Contains(r.Body, `value="two weeks"`) || !strings.Contains(r.Body, `aria-invalid="true"`) {
			t.Error("the refused form lost the typed value or does not mark the field")
		}
		adminCheckLabels(t, "refused rule form", r.Body)
	})

	t.Run("ErrOutOfRange", func(t *testing.T) {
		for field, value := range map[string]string{"loan_period": "-1", "hold_pickup_days": "0", "renewals": "5000", "loan_unit": "weeks"} {
			r := e.post(t, e.Admin, "/admin/rules", adminWith(e.ruleForm(), "item_type_id", e.id("DVD"), field, value))
			if r.Status != http.StatusUnprocessableEntity || adminFieldMsg(r.Body, field) == "" {
				t.Errorf("%s=%s: %d, want 422 with a message beside the field", field, value, r.Status)
			}
		}
	})

	t.Run("ErrUnknownScope", func(t *testing.T) {
		r := e.post(t, e.Admin, "/admin/rules", adminWith(e.ruleForm(), "branch_id", "999"))
		if r.Status != http.StatusUnprocessableEntity || adminFieldMsg(r.Body, "branch_id") == "" {
			t.Fatalf("unknown branch: %d, want 422 beside the branch", r.Status)
		}
	})

	t.Run("Edit", func(t *testing.T) {
		id := ruleID(t)
		r := e.get(t, e.Admin, "/admin/rules/"+id)
		for _, want := range []string{`value="21"`, `value="0.25"`, `value="5.00"`, `selected>Adult (ADULT)`, "Delete rule",
			`action="/admin/rules/` + id + `"`} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("edit form lacks %s", want)
			}
		}
		r = e.post(t, e.Admin, "/admin/rules/"+id, adminWith(e.ruleForm(), "loan_period", "48", "loan_unit", "hours", "branch_id", e.id("EAS"), "fine", "1,5"))
		if r.Status != http.StatusSeeOther {
			t.Fatalf("update rule: %d", r.Status)
		}
		var period, fine int
		var unit string
		var branch int64
		e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT loan_period, loan_unit, fine_cents, branch_id FROM circ_rules WHERE id = ?`, id).Scan(&period, &unit, &fine, &branch)
		})
		if period != 48 || unit != "hours" || fine != 150 || branch != e.IDs["EAS"] {
			t.Fatalf("after update: %d %s, fine %d, branch %d", period, unit, fine, branch)
		}
		r = e.get(t, e.Admin, "/admin/rules")
		if !strings.Contains(r.Body, "<td>Adult</td><td>Book</td><td>East</td>") || !strings.Contains(r.Body, "48 hours") {
			t.Error("the list does not show the edited rule")
		}
		// Back to any branch for the tests after.
		e.post(t, e.Admin, "/admin/rules/"+id, e.ruleForm())
	})

	t.Run("ErrEditInvalid", func(t *testing.T) {
		id := ruleID(t)
		r := e.post(t, e.Admin, "/admin/rules/"+id, adminWith(e.ruleForm(), "grace_periods", "x"))
		if r.Status != http.StatusUnprocessableEntity || adminFieldMsg(r.Body, "grace_periods") == "" ||
			!strings.Contains(r.Body, `action="/admin/rules/`+id+`"`) {
			t.Fatalf("invalid edit: %d, want 422 on the same rule's form", r.Status)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		for _, path := range []string{"/admin/rules/999", "/admin/rules/abc", "/admin/rules/-1"} {
			if r := e.get(t, e.Admin, path); r.Status != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", path, r.Status)
			}
		}
		if r := e.post(t, e.Admin, "/admin/rules/999", e.ruleForm()); r.Status != http.StatusNotFound {
			t.Errorf("update a missing rule: %d, want 404", r.Status)
		}
		if r := e.post(t, e.Admin, "/admin/rules/999/delete", nil); r.Status != http.StatusNotFound {
			t.Errorf("delete a missing rule: %d, want 404", r.Status)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		id := ruleID(t)
		r := e.post(t, e.Admin, "/admin/rules/"+id+"/delete", nil)
		if r.Status != http.StatusSeeOther || r.Location != "/admin/rules" {
			t.Fatalf("delete rule: %d to %q", r.Status, r.Location)
		}
		r = e.get(t, e.Admin, "/admin/rules")
		if !strings.Contains(r.Body, "Rule deleted: Adult, Book, any branch.") || strings.Contains(r.Body, "<td>Adult</td>") {
			t.Error("the list still shows the deleted rule, or no message")
		}
		if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'rule.delete'`); n != 1 {
			t.Errorf("%d rule.delete audit entries, want 1", n)
		}
	})
}

func TestAdminCalendar(t *testing.T) {
	e := newAdminEnv(t)

	t.Run("Page", func(t *testing.T) {
		r := e.get(t, e.Admin, "/admin/calendar")
		for _, want := range []string{"Central (CEN)", "East (EAS)", `action="/admin/calendar/branches/` + e.id("CEN") + `"`,
			`name="closed_weekdays" value="0" checked`, `value="20:00"`, `type="date"`, `<option value="0" selected>All branches</option>`} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("calendar page lacks %s", want)
			}
		}
	})

	t.Run("AddClosedDay", func(t *testing.T) {
		r := e.post(t, e.Admin, "/admin/calendar/days", url.Values{"day": {"2026-12-25"}, "branch_id": {"0"}, "description": {"Christmas Day"}})
		if r.Status != http.StatusSeeOther || r.Location != "/admin/calendar" {
			t.Fatalf("add closed day: %d to %q", r.Status, r.Location)
		}
		r = e.post(t, e.Admin, "/admin/calendar/days", url.Values{"day": {"2026-12-24"}, "branch_id": {e.id("EAS")}, "description": {"Stocktaking"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("add a branch's closed day: %d", r.Status)
		}
		r = e.get(t, e.Admin, "/admin/calendar")
		for _, want := range []string{"Closed day added: 2026-12-24, East (Stocktaking).",
			"<td>2026-12-25</td><td>Friday</td><td>All branches</td><td>Christmas Day</td>",
			"<td>2026-12-24</td><td>Thursday</td><td>East</td><td>Stocktaking</td>"} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("calendar page lacks %s", want)
			}
		}
		if strings.Index(r.Body, "2026-12-24</td>") > strings.Index(r.Body, "2026-12-25</td>") {
			t.Error("closed days are not listed soonest first")
		}
	})

	t.Run("ErrBadDate", func(t *testing.T) {
		for _, day := range []string{"", "25/12/2026", "2026-02-30"} {
			r := e.post(t, e.Admin, "/admin/calendar/days", url.Values{"day": {day}, "branch_id": {"0"}, "description": {"Typo day"}})
			if r.Status != http.StatusUnprocessableEntity || adminFieldMsg(r.Body, "day") == "" {
				t.Errorf("date %q: %d, want 422 with a message beside the date", day, r.Status)
			}
			if !strings.Contains(r.Body, `value="Typo day"`) {
				t.Errorf("date %q: the refused form lost the description", day)
			}
			adminCheckLabels(t, "refused calendar page", r.Body)
		}
	})

	t.Run("ErrAlreadyClosed", func(t *testing.T) {
		r := e.post(t, e.Admin, "/admin/calendar/days", url.Values{"day": {"2026-12-25"}, "branch_id": {e.id("CEN")}})
		if r.Status != http.StatusConflict || !strings.Contains(adminFieldMsg(r.Body, "day"), "already closed") {
			t.Fatalf("closing a closed day: %d, want 409 saying it is already closed", r.Status)
		}
		r = e.post(t, e.Admin, "/admin/calendar/days", url.Values{"day": {"2026-12-26"}, "branch_id": {"999"}})
		if r.Status != http.StatusUnprocessableEntity || adminFieldMsg(r.Body, "closed_branch_id") == "" {
			t.Fatalf("unknown branch: %d, want 422 beside the branch", r.Status)
		}
	})

	t.Run("DeleteClosedDay", func(t *testing.T) {
		var id int64
		e.DB.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT id FROM closed_days WHERE day = '2026-12-24'`).Scan(&id)
		})
		r := e.post(t, e.Admin, "/admin/calendar/days/"+strconv.FormatInt(id, 10)+"/delete", nil)
		if r.Status != http.StatusSeeOther {
			t.Fatalf("delete closed day: %d", r.Status)
		}
		r = e.get(t, e.Admin, "/admin/calendar")
		if strings.Contains(r.Body, "Stocktaking") || !strings.Contains(r.Body, "Christmas Day") {
			t.Error("the deleted day is still listed, or the other one went too")
		}
		if r := e.post(t, e.Admin, "/admin/calendar/days/"+strconv.FormatInt(id, 10)+"/delete", nil); r.Status != http.StatusNotFound {
			t.Errorf("deleting it again: %d, want 404", r.Status)
		}
	})

	t.Run("BranchHours", func(t *testing.T) {
		r := e.post(t, e.Admin, "/admin/calendar/branches/"+e.id("EAS"), url.Values{"closed_weekdays": {"0", "1"}, "closes_at": {"17:30"}})
		if r.Status != http.StatusSeeOther || r.Location != "/admin/calendar" {
			t.Fatalf("save hours: %d to %q", r.Status, r.Location)
		}
		var cal *library.Calendar
		mon := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		e.DB.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			cal, err = library.LoadCalendar(tx, e.IDs["EAS"], time.UTC, mon, mon)
			return err
		})
		if cal == nil || cal.IsOpen(mon) || !cal.IsOpen(mon.AddDate(0, 0, 1)) || cal.Branch.ClosesAt != "17:30" {
			t.Fatalf("East after saving: %+v", cal)
		}
		r = e.get(t, e.Admin, "/admin/calendar")
		if !strings.Contains(r.Body, "East: weekly closed days and closing time saved.") || !strings.Contains(r.Body, `value="17:30"`) {
			t.Error("the calendar page does not show the saved hours")
		}
	})

	t.Run("ErrBranchHours", func(t *testing.T) {
		for name, form := range map[string]url.Values{
			"closes_at":       {"closes_at": {"25:00"}, "closed_weekdays": {"3"}},
			"closed_weekdays": {"closes_at": {"18:00"}, "closed_weekdays": {"0", "1", "2", "3", "4", "5", "6"}},
		} {
			r := e.post(t, e.Admin, "/admin/calendar/branches/"+e.id("CEN"), form)
			if r.Status != http.StatusUnprocessableEntity || adminFieldMsg(r.Body, name+"-"+e.id("CEN")) == "" {
				t.Errorf("%s: %d, want 422 beside the field", name, r.Status)
			}
		}
		r := e.post(t, e.Admin, "/admin/calendar/branches/"+e.id("CEN"), url.Values{"closes_at": {"25:00"}, "closed_weekdays": {"3"}})
		if !strings.Contains(r.Body, `value="25:00"`) || !strings.Contains(r.Body, `id="closed_weekdays-`+e.id("CEN")+`-3" name="closed_weekdays" value="3" checked`) {
			t.Error("the refused hours form lost what was typed")
		}
		if n := e.count(t, `SELECT count(*) FROM branches WHERE id = ? AND closes_at = '20:00' AND closed_weekdays = '0'`, e.IDs["CEN"]); n != 1 {
			t.Error("refused hours were saved")
		}
		if r := e.post(t, e.Admin, "/admin/calendar/branches/999", url.Values{"closes_at": {"18:00"}}); r.Status != http.StatusNotFound {
			t.Errorf("unknown branch: %d, want 404", r.Status)
		}
		// A weekday the form does not offer is refused before any write, and an
		// unknown branch is still not found.
		r = e.post(t, e.Admin, "/admin/calendar/branches/"+e.id("CEN"), url.Values{"closes_at": {"18:00"}, "closed_weekdays": {"9"}})
		if r.Status != http.StatusUnprocessableEntity || adminFieldMsg(r.Body, "closed_weekdays-"+e.id("CEN")) == "" {
			t.Errorf("weekday 9: %d, want 422 beside the field", r.Status)
		}
		if r := e.post(t, e.Admin, "/admin/calendar/branches/999", url.Values{"closes_at": {"18:00"}, "closed_weekdays": {"9"}}); r.Status != http.StatusNotFound {
			t.Errorf("unknown branch with weekday 9: %d, want 404", r.Status)
		}
	})
}

func TestAdminPreferences(t *testing.T) {
	e := newAdminEnv(t)
	r := e.get(t, e.Admin, "/admin/preferences")
	for _, want := range []string{`value="Stacks Library"`, `value="5.00"`, `value="UTC"`, "<span class=\"library\">Stacks Library</span>"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("preferences form lacks %s", want)
		}
	}

	t.Run("Save", func(t *testing.T) {
		r := e.post(t, e.Admin, "/admin/preferences", url.Values{
			"library_name": {"Riverside Public Library"}, "fines_limit": {"7.5"}, "timezone": {"Europe/London"}, "desk_idle": {"12"},
			"anonymise_days": {"90"}, "purge_years": {"3"}})
		if r.Status != http.StatusSeeOther || r.Location != "/admin/preferences" {
			t.Fatalf("save preferences: %d to %q", r.Status, r.Location)
		}
		// The server caches preferences; the very next page shows the new name.
		r = e.get(t, e.Admin, "/admin/preferences")
		for _, want := range []string{`<span class="library">Riverside Public Library</span>`, "Preferences saved.",
			`value="7.50"`, `value="Europe/London"`, `value="12"`, `value="90"`, `value="3"`} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("after saving, the page lacks %s", want)
			}
		}
		desk := e.client(t)
		e.login(t, desk, "desk", "desk")
		if r := e.get(t, desk, "/"); !strings.Contains(r.Body, "Riverside Public Library") {
			t.Error("another user's next page does not show the new name")
		}
		var p library.Preferences
		e.DB.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			p, err = library.LoadPreferences(tx)
			return err
		})
		if p.FinesLimitCents != 750 || p.Location.String() != "Europe/London" || p.LibraryName != "Riverside Public Library" || p.DeskIdleMinutes != 12 ||
			p.AnonymiseLoansAfterDays != 90 || p.PurgeInactiveAfterYears != 3 {
			t.Errorf("stored preferences %+v", p)
		}
		if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'preferences.save'`); n != 1 {
			t.Errorf("%d preferences.save audit entries, want 1", n)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		r := e.post(t, e.Admin, "/admin/preferences", url.Values{
			"library_name": {"  "}, "fines_limit": {"lots"}, "timezone": {"Mars/Olympus_Mons"}, "desk_idle": {"-3"},
			"anonymise_days": {"-1"}, "purge_years": {"1000"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("invalid preferences: %d, want 422", r.Status)
		}
		for _, field := range []string{"library_name", "fines_limit", "timezone", "desk_idle", "anonymise_days", "purge_years"} {
			if adminFieldMsg(r.Body, field) == "" {
				t.Errorf("no message beside %s", field)
			}
		}
		if !strings.Contains(r.Body, `value="Mars/Olympus_Mons"`) {
			t.Error("the refused form lost what was typed")
		}
		adminCheckLabels(t, "refused preferences", r.Body)
		if r := e.post(t, e.Admin, "/admin/preferences", url.Values{
			"library_name": {"X"}, "fines_limit": {"1"}, "timezone": {"Local"}, "desk_idle": {"5"}, "anonymise_days": {"0"}, "purge_years": {"0"}}); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("time zone Local: %d, want 422", r.Status)
		}
		if n := e.count(t, `SELECT count(*) FROM preferences WHERE name = 'library_name' AND value = 'Riverside Public Library'`); n != 1 {
			t.Error("a refused form changed the library name")
		}
	})
}
