package sip_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/sip"
)

// TestCheckoutSameItem: the same 11 sent twice for a patron and an item (a kiosk
// retrying). By default (answer) the second is answered as lent, with the due
// date, and the loan in the database is unchanged whatever the renewal policy;
// with renew, a renewal policy of Y renews a week later and N refuses.
func TestCheckoutSameItem(t *testing.T) {
	for _, tc := range []struct {
		setting sip.SameItemCheckout
		policy  string
		later   time.Duration
		// want is the second answer's ok, renewal ok, magnetic media and
		// desensitize; due its AH; renewals the loan's count after it.
		want, due string
		renewals  string
		message   string
	}{
		{sip.SameItemAnswer, "N", 0, "1NUY", "20261221    200000", "0", "You already have this item. It is due 2026-12-21."},
		{sip.SameItemAnswer, "Y", 0, "1NUY", "20261221    200000", "0", "You already have this item. It is due 2026-12-21."},
		{sip.SameItemAnswer, "N", 7 * 24 * time.Hour, "1NUY", "20261221    200000", "0", "You already have this item. It is due 2026-12-21."},
		{sip.SameItemAnswer, "Y", 7 * 24 * time.Hour, "1NUY", "20261221    200000", "0", "You already have this item. It is due 2026-12-21."},
		{sip.SameItemRenew, "N", 0, "0NUN", "", "0", "Pride and Prejudice cannot be renewed now"},
		{sip.SameItemRenew, "Y", 0, "0NUN", "", "0", "Pride and Prejudice cannot be renewed now"},
		{sip.SameItemRenew, "N", 7 * 24 * time.Hour, "0NUN", "", "0", "You already have this item. Renew it instead"},
		{sip.SameItemRenew, "Y", 7 * 24 * time.Hour, "1YUY", "20261228    200000", "1", "Renewed. Now due 2026-12-28."},
	} {
		name := string(tc.setting) + "/Policy" + tc.policy
		if tc.later > 0 {
			name += "/WeekLater"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			if tc.setting != sip.SameItemAnswer {
				e.settings(func(u *sip.AccountUpdate) { u.Settings.SameItemCheckout = tc.setting })
			}
			c := e.client()
			msg := "11" + tc.policy + "N" + sipNow + strings.Repeat(" ", 18) + "AOCEN|AAP0001|ABI00001|AC|AD1234|"
			if resp := send(t, c, msg); !strings.HasPrefix(resp, "121NUY") {
				t.Fatalf("first checkout: %s", resp)
			}
			loan := `SELECT due_at, renewals FROM loans WHERE item_id = (SELECT id FROM items WHERE barcode = 'I00001') AND returned_at IS NULL`
			before := queryRows(t, e.d, loan)
			e.setClock(dbtest.Monday.Add(tc.later))

			resp := send(t, c, msg)
			if got := resp[2:6]; got != tc.want {
				t.Errorf("second checkout: %s, want %s", resp, tc.want)
			}
			f := responseFields(resp, 22)
			if f["AH"] != tc.due || f["AJ"] != "Pride and Prejudice" || !strings.HasPrefix(f["AF"], tc.message) {
				t.Errorf("second checkout: AH %q AJ %q AF %q; want AH %q, AF %q", f["AH"], f["AJ"], f["AF"], tc.due, tc.message)
			}
			after := queryRows(t, e.d, loan)
			if len(after) != 1 || !strings.HasSuffix(after[0], "renewals="+tc.renewals) {
				t.Errorf("the loan after: %v, want %s renewals", after, tc.renewals)
			}
			if tc.renewals == "0" && strings.Join(after, "") != strings.Join(before, "") {
				t.Errorf("the loan changed: %v, was %v", after, before)
			}
		})
	}
}
