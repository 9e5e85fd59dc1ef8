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
