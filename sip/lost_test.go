package sip_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
)

// TestCheckinLostItem: a terminal's checkin of a lost item carries, in AF, what
// the desk is told about its bill.
func TestCheckinLostItem(t *testing.T) {
	e := newEnv(t)
	if err := e.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE items SET price_cents = 2500 WHERE barcode = 'I00002'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	if resp := send(t, c, checkoutMsg("P0001", "I00002")); resp[2] != '1' {
		t.Fatalf("checkout: %s", resp)
	}
	loanID, err := strconv.ParseInt(e.queryString(`SELECT l.id FROM loans l JOIN items i ON i.id = l.item_id WHERE i.barcode = 'I00002' AND l.returned_at IS NULL`), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	svc := circulation.NewService(e.d, nil)
	if _, err := svc.DeclareLost(context.Background(), deskActor(t, e), patronID(t, e, "P0001"), loanID); err != nil {
		t.Fatal(err)
	}
	resp := send(t, c, checkinMsg("I00002"))
	fields := responseFields(resp, 22)
	if resp[2] != '1' || !strings.Contains(fields["AF"], "Lost item returned: 25.00") {
		t.Errorf("answer %s: want ok and AF telling the lost item's refund", resp)
	}
}

// TestFeePaidByMethod: a payment at a terminal is a payment by the method of its
// payment type, at the terminal's branch, allocated to the lines it paid, so it
// is in that branch's cash-up.
func TestFeePaidByMethod(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	for _, tc := range []struct{ typ, amount, method string }{
		{"00", "1.00", "cash"}, {"01", "1.50", "card"}, {"02", "2.00", "card"}, {"05", "0.50", "other"},
	} {
		msg := "3720261130    10000000" + tc.typ + "USDBV" + tc.amount + "|AOCEN|AAP0002|AC|AD1234|BKT" + tc.typ + "|"
		if resp := send(t, c, msg); !strings.HasPrefix(resp, "38Y") {
			t.Fatalf("fee paid %s: %s", tc.typ, resp)
		}
		got := e.queryString(`SELECT g.payment_method || ' ' || b.code || ' ' || g.amount_cents || ' ' ||
				(SELECT coalesce(sum(a.amount_cents), 0) FROM ledger_allocations a WHERE a.payment_id = g.id)
			FROM ledger g JOIN branches b ON b.id = g.branch_id WHERE g.kind = 'payment' ORDER BY g.id DESC LIMIT 1`)
		cents, _ := strconv.ParseFloat(tc.amount, 64)
		want := tc.method + " CEN " + strconv.Itoa(-int(cents*100+0.5)) + " " + strconv.Itoa(int(cents*100+0.5))
		if got != want {
			t.Errorf("payment type %s: ledger row %q, want %q (method, desk, amount, allocated)", tc.typ, got, want)
		}
	}
}
