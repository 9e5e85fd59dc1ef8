package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/patrons"
)

// formFields are the fields of every form, by route, each with a value a person
// could have typed. TestHostileInput sends each field hostile values, the others as
// here; a POST route missing from this table fails the test, so that a new form is
// covered the day it is added.
var formFields = map[string]url.Values{
	"POST /login":                           {"username": {"nobody"}, "password": {"wrong"}, "next": {"/patrons"}, "branch": {"CEN"}},
	"POST /logout":                          {},
	"POST /admin/copycat":                   copycatTargetForm(),
	"POST /admin/copycat/{id}":              copycatTargetForm(),
	"POST /admin/copycat/{id}/delete":       {},
	"POST /cataloguing/copy/import":         {"marc": {copycatHostileRecord}, "target": {"Union catalogue"}, "mode": {"add"}},
	"POST /account/password":                {"current": {"wrong"}, "password": {"new-pass"}, "confirm": {"new-pass"}},
	"POST /workstation":                     {"sounds": {"off"}, "paper": {"receipt"}},
	"POST /branch":                          {"branch": {"CEN"}},
	"POST /checkout/patron":                 {"card": {"P0001"}},
	"POST /checkout":                        {"barcode": {"NOSUCH1"}, "confirm": {"fines"}},
	"POST /checkout/done":                   {},
	"POST /checkin":                         {"barcode": {"NOSUCH2"}},
	"POST /checkin/clear":                   {},
	"POST /checkin/acknowledge":             {"id": {"1"}},
	"POST /patrons":                         patronForm(),
	"POST /patrons/{id}":                    patronForm(),
	"POST /patrons/{id}/pay":                {"amount": {"0.50"}, "note": {"cash"}, "method": {"cash"}, "line": {"1"}},
	"POST /patrons/{id}/refund":             {"amount": {"0.50"}, "method": {"card"}, "note": {"returned book"}},
	"POST /patrons/{id}/charge":             {"type": {"CARD"}, "amount": {"2.00"}, "note": {"new card"}},
	"POST /patrons/{id}/lost":               {"loan_id": {"1"}, "confirm": {"1"}, "billed": {"1299"}},
	"POST /patrons/{id}/claim-returned":     {"loan_id": {"1"}},
	"POST /admin/codes/item-type-price":     {"item_type": {"BOOK"}, "price": {"25.00"}},
	"POST /admin/codes/charge-type":         {"code": {"LAMINATE"}, "description": {"Lamination"}, "default": {"1.00"}},
	"POST /patrons/{id}/waive":              {"amount": {"0.50"}, "reason": {"goodwill"}, "line": {"1"}},
	"POST /patrons/{id}/block":              {"note": {"lost card reported"}},
	"POST /patrons/{id}/unblock":            {"note": {"card found"}},
	"POST /patrons/{id}/pin":                {"pin": {"2468"}},
	"POST /patrons/{id}/renew-card":         {"return": {"/checkout"}},
	"POST /checkout/scan":                   {"scan": {"I00001"}},
	"POST /checkout/cancel":                 {"barcode": {"I00001"}},
	"POST /checkout/renew":                  {"loan": {"1"}},
	"POST /checkout/renew-card":             {},
	"POST /checkout/dismiss-message":        {},
	"POST /patrons/{id}/renew":              {"loan": {"1"}, "one": {""}, "all": {""}},
	"POST /patrons/{id}/holds":              {"item": {"I00008"}, "pickup": {"CEN"}, "confirm": {""}},
	"POST /holds/{id}/move":                 {"to": {"1"}, "return": {"/holds"}},
	"POST /holds/{id}/suspend":              {"until": {"2027-01-15"}, "return": {"/holds"}},
	"POST /holds/{id}/resume":               {"return": {"/holds"}},
	"POST /holds/{id}/cancel":               {"reason": {"patron asked"}, "return": {"/holds"}},
	"POST /holds/{id}/expire":               {"return": {"/holds"}},
	"POST /holds/pull/not-on-shelf":         {"barcode": {"I00009"}, "return": {"/holds"}},
	"POST /records":                         recordForm(),
	"POST /records/{id}":                    recordForm(),
	"POST /records/{id}/items":              itemForm(),
	"POST /records/new/marc":                {"marc": {"=LDR  00000nam a2200000 a 4500\n=245  10$aHostile\n"}, "step": {"preview"}, "base": {"0"}},
	"POST /records/{id}/marc":               {"marc": {"=LDR  00000nam a2200000 a 4500\n=245  10$aHostile\n"}, "step": {"preview"}, "base": {"1"}},
	"POST /records/{id}/marc/versions":      {"v": {"1"}},
	"POST /items/{id}":                      withField(itemForm(), "status", "available"),
	"POST /records/{id}/hold":               {"card": {"P0003"}, "pickup": {"CEN"}, "item": {""}, "confirm": {""}, "choose": {""}},
	"POST /admin/rules":                     ruleForm(),
	"POST /admin/rules/{id}":                ruleForm(),
	"POST /admin/rules/{id}/delete":         {},
	"POST /admin/calendar/branches/{id}":    {"closes_at": {"19:00"}, "closed_weekdays": {"0"}},
	"POST /admin/calendar/days":             {"day": {"2027-03-03"}, "description": {"Inventory"}, "branch_id": {"0"}},
	"POST /admin/calendar/days/{id}/delete": {},
	"POST /admin/import":                    {"branch": {"CEN"}, "item_type": {"BOOK"}, "generate": {"1"}},
	"POST /admin/patrons/import": {"match": {"card"}, "skip_bad": {"1"}, "clear_empty": {"1"}, "default_category": {"ADULT"},
		"default_branch": {"CEN"}, "default_expiry": {"2027-08-31"}, "action": {"dry-run"}},
	"POST /admin/codes/branch":        {"code": {"NEWB"}, "name": {"New branch"}},
	"POST /admin/codes/category":      {"code": {"NEWC"}, "name": {"New category"}},
	"POST /admin/codes/item-type":     {"code": {"NEWT"}, "name": {"New type"}, "not_for_loan": {"1"}},
	"POST /admin/staff":               {"username": {"jo"}, "display_name": {"Jo"}, "password": {"pass-jo"}, "role": {"circulation"}, "branch": {"CEN"}},
	"POST /admin/staff/{id}/active":   {"active": {"1"}},
	"POST /admin/staff/{id}/password": {"password": {"new-pass"}},
	"POST /admin/staff/{id}/waive":    {"can_waive": {"1"}},
	"POST /admin/sip":                 {"username": {"sorter"}, "password": {"pass-sorter"}, "institution": {"CEN"}, "branch": {"CEN"}},
	"POST /admin/sip/{id}":            {"institution": {"CEN"}, "branch": {"CEN"}, "checked_in_ok": {"1"}, "hold_items": {"title"}, "sort_bins_source": {"own"}, "sort_bins": {"hold=1,transfer=2"}, "allowed": {"11", "09"}, "contact_without_pin": {"1"}},
	"POST /admin/sip/{id}/active":     {"active": {"1"}},
	"POST /admin/sip/{id}/password":   {"password": {"new-pass"}},
	"POST /admin/sip/lockouts/clear":  {"key": {"login:kiosk|127.0.0.1"}},
	"POST /admin/preferences":         {"library_name": {"Stacks Library"}, "fines_limit": {"5.00"}, "timezone": {"UTC"}, "desk_idle": {"5"}, "anonymise_days": {"0"}, "purge_years": {"0"}},
	"POST /admin/patrons/{id}/purge":  {"confirm": {"yes"}},

	// A staged MARC import's review.
	"POST /admin/import/batches/{id}/actions": {"action_001": {"overlay"}, "action_035": {"new"}, "action_isbn": {"skip"}},
	"POST /admin/import/batches/{id}/commit":  {},
	"POST /admin/import/batches/{id}/undo":    {},

	// Reports, stocktake and SQL reports.
	"POST /admin/sql-reports":                    {"name": {"Loans"}, "description": {"All loans"}, "sql": {"SELECT count(*) FROM loans WHERE branch_id = :branch"}},
	"POST /admin/sql-reports/{id}":               {"name": {"Loans 2"}, "description": {""}, "sql": {"SELECT 1"}},
	"POST /admin/sql-reports/{id}/delete":        {},
	"POST /admin/sql-reports/{id}/run":           {"p_branch": {"1"}},
	"POST /admin/sql-reports/{id}/csv":           {"p_branch": {"1"}},
	"POST /reports/stocktake":                    {"branch": {"1"}, "from": {"FIC A"}, "to": {"FIC C"}, "location": {""}},
	"POST /reports/stocktake/{id}/scan":          {"barcode": {"I00001"}},
	"POST /reports/stocktake/{id}/checkin":       {"barcode": {"I00002"}},
	"POST /patrons/{id}/notices":                 {"notice_overdue": {"print"}, "notice_predue": {"email"}, "notice_hold_available": {"none"}},
	"POST /admin/notices/{id}/resend":            {"return": {"/admin/notices"}},
	"POST /admin/notices/templates/{id}":         {"subject": {"Due: {{.Count}}"}, "text": {"{{.Patron.Name}}"}, "html": {"<p>{{.Patron.Name}}</p>"}, "action": {"preview"}},
	"POST /admin/notices/templates/{id}/reset":   {},
	"POST /admin/notices/templates/{id}/preview": {"subject": {"Due: {{.Count}}"}, "text": {"{{.Patron.Name}}"}, "html": {"<p>{{.Patron.Name}}</p>"}},
	"POST /admin/notices/settings":               {"run_at": {"07:00"}, "hold_days": {"2"}, "card_days": {"14"}},
	"POST /admin/notices/settings/test":          {"to": {"someone@example.org"}},
	"POST /admin/notices/resend-failed":          {},
	"POST /admin/notices/rules":                  {"category": {"0"}, "item_type": {"0"}, "predue_days": {"2"}, "overdue1_days": {"1"}, "overdue2_days": {"7"}, "overdue3_days": {"14"}},
	"POST /notices/print":                        {"branch_id": {"1"}, "id": {"1"}},

	// Withdrawing, deleting, merging, batch item edits. The merge names a
	// record that does not exist, so that no request merges.
	"POST /items/{id}/withdraw":   {"reason": {"Weeded"}},
	"POST /items/{id}/delete":     {},
	"POST /records/{id}/delete":   {"holds": {"move"}, "move_holds_to": {"99999999"}},
	"POST /records/{id}/merge":    {"other": {"99999999"}, "take": {"245"}},
	"POST /items/batch/list":      {"barcodes": {"I00001\nNOSUCH"}},
	"POST /items/batch/preview":   {"barcodes": {"I00001\nNOSUCH"}, "field": {"location"}, "value": {"Reading room"}},
	"POST /items/batch":           {"barcodes": {"I00001\nNOSUCH"}, "field": {"location"}, "value": {"Reading room"}},
	"POST /items/batch/{id}/undo": {},

	// The patron page posts this, with a "return" path.
	"POST /patrons/{id}/desk-message/dismiss": {"return": {"/checkout"}},
}

// queryParams are the query parameters each page reads. Every GET route is also
// sent an unknown parameter.
var queryParams = map[string][]string{
	"GET /login":             {"next"},
	"GET /patrons":           {"q"},
	"GET /patrons/new":       {"card"},
	"GET /search":            {"q", "sort", "type", "branch", "available", "page"},
	"GET /holds":             {"branch"},
	"GET /records/{id}/hold": {"item"},
	"GET /admin/notices":     {"status", "before"},
	"GET /notices/print":     {"branch"},
	"GET /cashup":            {"day", "branch"},
	"GET /claims-returned":   {"branch", "status", "page"},

	// The merge form reads the other record's number.
	"GET /records/{id}/merge": {"other"},
}

func patronForm() url.Values {
	return url.Values{"card": {"H0001"}, "surname": {"Hostile"}, "first_name": {"Harry"}, "email": {"h@example.org"},
		"phone": {"555 0100"}, "address": {"1 Main Street"}, "category": {"ADULT"}, "home_branch": {"CEN"}, "notes": {"test"},
		"desk_message": {"Has a parcel waiting."}, "keep_history": {"1"}, "external_id": {"ST-1"}}
}

func recordForm() url.Values {
	return url.Values{"title": {"A Title"}, "author": {"An Author"}, "isbn": {"9780441478125"}, "publisher": {"Ace"},
		"year": {"1969"}, "subjects": {"Fiction"}}
}

func itemForm() url.Values {
	return url.Values{"barcode": {"H00001"}, "item_type": {"BOOK"}, "home_branch": {"CEN"}, "call_number": {"FIC H"}, "location": {"Adult fiction"}, "price": {"9.99"}}
}

func ruleForm() url.Values {
	return url.Values{"patron_category_id": {"0"}, "item_type_id": {"0"}, "branch_id": {"3"}, "loan_period": {"14"},
		"loan_unit": {"days"}, "max_loans": {"10"}, "renewals": {"2"}, "fine": {"0.20"}, "grace_periods": {"1"},
		"fine_cap": {"5.00"}, "hold_pickup_days": {"7"}, "lost_after_days": {"60"}, "processing_fee": {"5.00"},
		"lost_return": {"refund"}, "lost_return_fee": {"kept"}, "lost_forgive_fine": {"1"}}
}

func withField(v url.Values, k, value string) url.Values {
	v.Set(k, value)
	return v
}

// hostileValue is one kind of hostile input. Every field gets those marked always
// (what could be stored wrongly); the others take turns, a different one for each
// field, so that each kind reaches every form. Under make soak every field gets
// every value.
type hostileValue struct {
	name, value string
	always      bool
}

// hostileValues are sent to form fields and query parameters. STACKS_SOAK=1 (make
// soak) adds more.
func hostileValues() []hostileValue {
	vs := []hostileValue{
		{"Overlong", strings.Repeat("A", 100_000), true},
		{"InvalidUTF8", "abc\xff\xfe\xc3(", true},
		{"ControlChars", "a\x00b\x01\r\n\tc\x7f", true},
		{"ScriptTag", `<script>alert("stacks")</script>`, true},
		{"SQLInjection", `' OR '1'='1' --`, false},
		{"SQLStatement", `1); DROP TABLE patrons; --`, false},
		{"AttributeBreakout", `"><img src=x onerror=alert(1)>`, false},
		{"HugeNumber", "99999999999999999999999999", false},
	}
	if os.Getenv("STACKS_SOAK") != "" {
		vs = append(vs,
			hostileValue{"UnionSelect", `x' UNION SELECT password_hash, 1, 1 FROM staff_users --`, true},
			hostileValue{"Negative", "-1", true},
			hostileValue{"Float", "1e309", true},
			hostileValue{"PathTraversal", "../../../../etc/passwd", true},
			hostileValue{"ProtocolURL", "javascript:alert(1)", true},
			hostileValue{"OpenRedirect", "//evil.example/", true},
			hostileValue{"Empty", "", true},
			hostileValue{"Spaces", "   ", true},
			hostileValue{"LongUnicode", strings.Repeat("é€😀", 20_000), true},
			hostileValue{"OverlongUTF8", "\xc0\xaf\xe0\x80\xaf", true},
			hostileValue{"Surrogate", "\xed\xa0\x80", true},
			hostileValue{"FormatString", "%s%s%n%x%d", true},
			hostileValue{"Newlines", strings.Repeat("\r\n", 5000), true},
		)
	}
	return vs
}

// turns picks the hostile values for one field or parameter: those marked always
// and the turn-th of the others (all of them under make soak).
func turns(values []hostileValue, turn int) []hostileValue {
	var out, others []hostileValue
	for _, v := range values {
		if v.always || os.Getenv("STACKS_SOAK") != "" {
			out = append(out, v)
		} else {
			others = append(others, v)
		}
	}
	if len(others) > 0 {
		out = append(out, others[turn%len(others)])
	}
	return out
}

// hostileIDs replace {id} in a path; make soak sends more.
func hostileIDs() []string {
	if os.Getenv("STACKS_SOAK") != "" {
		return []string{"0", "-1", "abc", "99999999999999999999999", "1%20OR%201=1", "1%27--", "%00", "%ff", "1.5"}
	}
	return []string{"-1", "99999999999999999999999", "1%20OR%201=1", "%ff"}
}

// checkHostileAnswer checks one answer to hostile input: never a server error; a
// refusal says why; a page shows what was sent only escaped.
func checkHostileAnswer(t *testing.T, what string, r response, sent string) {
	t.Helper()
	if r.Status >= 500 {
		t.Errorf("%s: status %d\n%.500s", what, r.Status, r.Body)
		return
	}
	if r.Status >= 400 && len(strings.TrimSpace(r.Body)) < 20 {
		t.Errorf("%s: status %d without a message: %q", what, r.Status, r.Body)
	}
	if strings.ContainsAny(sent, `<>"`) && strings.Contains(r.Body, sent) {
		t.Errorf("%s: the page repeats the input unescaped", what)
	}
	checkHeaders(t, what, r)
}

// TestHostileInput sends overlong values, invalid UTF-8, control characters and
// markup, and in turn SQL injection, attribute breakouts and overflowing numbers
// (see hostileValues), to every form field and query parameter of every route, and
// garbage ids to every path with an id, signed in as an administrator (who may use
// every route). Every answer is a page or a 4xx with a message, never a 5xx; afterwards
// the database passes every check of stacks check and holds no text that is not
// valid UTF-8, no NUL and nothing overlong.
func TestHostileInput(t *testing.T) {
	e := newDemoEnv(t)
	rs := routes(t, e)
	ids := routeIDs(t, e)
	admin := e.client(t)
	if r := e.login(t, admin, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("admin login: %d", r.Status)
	}
	// Serve a patron at Check out, so that the checkout form is reached.
	if r := e.post(t, admin, "/checkout/patron", url.Values{"card": {"P0001"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("checkout patron: %d", r.Status)
	}
	values := hostileValues()
	n, turn, unique := 0, 0, 0
	// The login and logout forms sign the client out or lock the address: last, and
	// with their own client.
	last := func(rt route) bool { return rt.Pattern == "/login" || rt.Pattern == "/logout" }
	for _, pass := range []bool{false, true} {
		for _, rt := range rs {
			if last(rt) != pass || rt.Pattern == "/static/*" {
				continue
			}
			c := admin
			if pass {
				c = e.client(t)
			}
			switch rt.Method {
			case http.MethodGet:
				for _, p := range append(queryParams[rt.String()], "junk") {
					turn++
					for _, v := range turns(values, turn) {
						path := pathOf(rt.Pattern, ids, "") + "?" + url.Values{p: {v.value}}.Encode()
						r := e.get(t, c, path)
						checkHostileAnswer(t, fmt.Sprintf("%s ?%s=%s", rt, p, v.name), r, v.value)
						n++
					}
				}
			case http.MethodPost:
				base, ok := formFields[rt.String()]
				if !ok {
					t.Errorf("%s: no entry in formFields; add the form's fields", rt)
					continue
				}
				fields := []string{"junk"}
				for f := range base {
					fields = append(fields, f)
				}
				for _, f := range fields {
					turn++
					for _, v := range turns(values, turn) {
						form := url.Values{}
						for k, vs := range base {
							form[k] = append([]string(nil), vs...)
						}
						// A new card and barcode each time, so that a save is not
						// refused only as a duplicate.
						unique++
						if f != "card" && form.Has("card") && rt.Pattern == "/patrons" {
							form.Set("card", fmt.Sprintf("H%05d", unique))
						}
						if f != "barcode" && form.Has("barcode") && strings.Contains(rt.Pattern, "items") {
							form.Set("barcode", fmt.Sprintf("H%05d", unique))
						}
						if f != "day" && form.Has("day") {
							form.Set("day", fmt.Sprintf("2028-%02d-%02d", unique%12+1, unique%28+1))
						}
						form.Set(f, v.value)
						r := e.post(t, c, pathOf(rt.Pattern, ids, ""), form)
						checkHostileAnswer(t, fmt.Sprintf("%s %s=%s", rt, f, v.name), r, v.value)
						n++
					}
				}
			}
			if strings.Contains(rt.Pattern, "{id}") {
				for _, id := range hostileIDs() {
					what := fmt.Sprintf("%s id=%s", rt, id)
					r := e.request(t, c, rt.Method, pathOf(rt.Pattern, ids, id), formFields[rt.String()])
					checkHostileAnswer(t, what, r, "")
					if r.Status == http.StatusSeeOther && rt.Method == http.MethodPost && !strings.HasPrefix(r.Location, "/login") {
						// A hold action goes back to the page it came from, which says
						// what went wrong.
						r = e.get(t, c, r.Location)
						checkHostileAnswer(t, what+" (the page after)", r, "")
						if !strings.Contains(r.Body, "There is no") {
							t.Errorf("%s: redirected to a page that does not say what went wrong", what)
						}
					} else if r.Status < 400 {
						t.Errorf("%s: %d, want a refusal", what, r.Status)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d hostile requests", n)
	checkStored(t, e)
}

// checkStored checks the database after hostile input: stacks check's invariants
// hold, and no text column holds invalid UTF-8, a NUL, or more than a form allows.
//
// It reads through connections of its own, as stacks check does: SQLite 3.54's
// integrity_check, run on a pooled connection that read the search index before
// other connections changed it, can report "fts5: corruption found reading blob"
// where a fresh connection finds the index sound.
func checkStored(t *testing.T, e *testEnv) {
	t.Helper()
	ctx := context.Background()
	d, err := db.Open(e.DB.Path(), db.Options{ReadConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = d.Read(ctx, func(tx *db.Tx) error {
		for _, check := range []func(*db.Tx) ([]stacks.Violation, error){db.Check, circulation.Check, holds.Check, patrons.Check} {
			vs, err := check(tx)
			if err != nil {
				return err
			}
			for _, v := range vs {
				t.Errorf("after hostile input: %s", v)
			}
		}
		tables, err := textColumns(tx)
		if err != nil {
			return err
		}
		for table, cols := range tables {
			for _, col := range cols {
				rows, err := tx.Query(textValues(table, col))
				if err != nil {
					return err
				}
				for rows.Next() {
					var id, s string
					if err := rows.Scan(&id, &s); err != nil {
						rows.Close()
						return err
					}
					switch {
					case !utf8.ValidString(s):
						t.Errorf("%s.%s of row %s is not valid UTF-8: %.80q", table, col, id, s)
					case strings.ContainsRune(s, 0):
						t.Errorf("%s.%s of row %s holds a NUL: %.80q", table, col, id, s)
					case len(s) > 20_000 && !(table == "records" && col == "marc"):
						t.Errorf("%s.%s of row %s holds %d bytes", table, col, id, len(s))
					}
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// textValues is the statement reading a text column's values, each with its
// row's identity. Engine-specific: SQLite's rowid and typeof (a TEXT column may
// hold other types); PostgreSQL's (the counterpart) ctid, every value text.
func textValues(table, col string) string {
	if dbtest.Engine() == db.Postgres {
		return `SELECT CAST(ctid AS TEXT), ` + col + ` FROM ` + table + ` WHERE ` + col + ` IS NOT NULL`
	}
	return `SELECT CAST(rowid AS TEXT), ` + col + ` FROM ` + table + ` WHERE typeof(` + col + `) = 'text'`
}

// textColumns lists the TEXT columns of the library's tables (not the sessions,
// which scs stores as data, nor the search index). Engine-specific: SQLite's
// schema table and pragma_table_info; PostgreSQL's (the counterpart)
// information_schema.
func textColumns(tx *db.Tx) (map[string][]string, error) {
	q := `SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE 'records_fts%' AND m.name <> 'sessions'
		  AND upper(p.type) = 'TEXT'`
	if dbtest.Engine() == db.Postgres {
		q = `SELECT c.table_name, c.column_name FROM information_schema.columns c
			JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
			WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.data_type = 'text'
			  AND c.table_name NOT LIKE 'records_fts%' AND c.table_name <> 'sessions'`
	}
	rows, err := tx.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			return nil, err
		}
		out[table] = append(out[table], col)
	}
	return out, rows.Err()
}
