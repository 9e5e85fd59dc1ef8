package opac_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestPostStatements records what each form post costs in SQL statements, as
// it is: the 10-statement budget is for pages (GETs); a post does the desk's
// work with the desk's rules, and renewing runs a few statements a loan. The
// ceilings catch a post that grows (a query a row where one would do).
func TestPostStatements(t *testing.T) {
	e := newEnv(t)
	barcodes := []string{"I00001", "I00002", "I00003", "I00004", "I00005", "I00006"}
	for _, b := range barcodes {
		e.checkout(t, "P0001", b)
	}
	c := e.client()
	e.signIn(t, c, "P0001")
	loan := e.checkout(t, "P0001", "I00007")
	var rec int64
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT id FROM records ORDER BY id DESC LIMIT 1 OFFSET 5`).Scan(&rec)
	}); err != nil {
		t.Fatal(err)
	}
	record := strconv.FormatInt(rec, 10)
	holdPath := func(action string) func() string {
		return func() string {
			return "/account/holds/" + strconv.FormatInt(e.openHold(t, "P0001", record), 10) + "/" + action
		}
	}
	fixed := func(p string) func() string { return func() string { return p } }
	for _, tc := range []struct {
		name string
		path func() string
		form url.Values
		max  int
	}{
		// The ones that read the preferences count one statement for their
		// version (several servers may share the database).
		{"RenewOne", fixed("/account/renew"), url.Values{"loan": {strconv.FormatInt(loan.ID, 10)}}, 10},
		// Seven loans: a fixed part and about four statements a loan.
		{"RenewAll", fixed("/account/renew"), url.Values{"all": {"1"}}, 34},
		{"PlaceHold", fixed("/records/" + record + "/hold"), url.Values{"pickup": {"CEN"}}, 11},
		{"SuspendHold", holdPath("suspend"), url.Values{"until": {"2027-01-10"}}, 8},
		{"CancelHold", holdPath("cancel"), url.Values{"confirm": {"yes"}}, 8},
		{"Notices", fixed("/account/notices"), url.Values{"notice_overdue": {"print"}}, 5},
		{"PINChange", fixed("/account/pin"), url.Values{"current": {"1234"}, "new": {"5678"}, "confirm": {"5678"}}, 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post(t, c, tc.path(), tc.form)
			if r.Status != http.StatusSeeOther {
				t.Fatalf("%d\n%s", r.Status, text(r.Body))
			}
			n := statements(t, r)
			t.Logf("%s: %d statements", tc.name, n)
			if n > tc.max {
				t.Errorf("%s ran %d statements, more than the %d it ran when measured", tc.name, n, tc.max)
			}
		})
	}
}
