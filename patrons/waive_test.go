package patrons_test

import (
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// TestWaiveLines: a waiver forgives the lines staff chose (all they owe, or part
// of one), is recorded against them, leaves the other lines as they were, and
// is refused to an account without the waive permission.
func TestWaiveLines(t *testing.T) {
	d := mustOpenDB(t)
	reader := mustFindByCard(t, d, "P0001")
	admin := stacks.Actor{StaffID: 2, Name: "admin", BranchID: 1}
	charge := func(cents int64, what string) int64 {
		t.Helper()
		var id int64
		if err := write(d, func(tx *db.Tx) (err error) {
			if err = patrons.Charge(tx, desk, reader.ID, patrons.KindOverdue, cents, 0, what); err != nil {
				return err
			}
			return tx.QueryRow(`SELECT max(id) FROM ledger WHERE patron_id = ?`, reader.ID).Scan(&id)
		}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	older := charge(250, "Overdue: Older title")
	newer := charge(300, "Overdue: Newer title")
	owes := func() map[int64]int64 {
		t.Helper()
		out := map[int64]int64{}
		read(t, d, func(tx *db.Tx) error {
			open, _, err := patrons.OpenCharges(tx, reader.ID)
			for _, c := range open {
				out[c.ID] = c.OutstandingCents
			}
			return err
		})
		return out
	}
	waive := func(actor stacks.Actor, req patrons.WaiveRequest) (id, cents int64, err error) {
		req.PatronID = reader.ID
		err = write(d, func(tx *db.Tx) (err error) {
			id, cents, err = patrons.WaiveLines(tx, actor, req)
			return err
		})
		return id, cents, err
	}
	allocated := func(waiver int64) map[int64]int64 {
		t.Helper()
		out := map[int64]int64{}
		read(t, d, func(tx *db.Tx) error {
			rows, err := tx.Query(`SELECT charge_id, amount_cents FROM ledger_allocations WHERE payment_id = ?`, waiver)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var c, n int64
				if err := rows.Scan(&c, &n); err != nil {
					return err
				}
				out[c] = n
			}
			return rows.Err()
		})
		return out
	}

	t.Run("ErrNoPermission", func(t *testing.T) {
		_, _, err := waive(desk, patrons.WaiveRequest{ChargeIDs: []int64{newer}, Reason: "hardship"})
		if stacks.ErrorCode(err) != stacks.EFORBIDDEN {
			t.Fatalf("desk without the permission: %v, want forbidden", err)
		}
		if got := owes(); got[older] != 250 || got[newer] != 300 {
			t.Fatalf("owes %v after a refused waiver", got)
		}
	})

	t.Run("ErrNoLines", func(t *testing.T) {
		_, _, err := waive(admin, patrons.WaiveRequest{Reason: "hardship"})
		wantErr(t, err, stacks.EINVALID, "lines", "Tick the lines")
	})

	t.Run("ErrNotAnOpenLine", func(t *testing.T) {
		_, _, err := waive(admin, patrons.WaiveRequest{ChargeIDs: []int64{999999}, Reason: "hardship"})
		wantErr(t, err, stacks.EINVALID, "lines", "not an open charge")
	})

	t.Run("ErrMoreThanTheLinesOwe", func(t *testing.T) {
		_, _, err := waive(admin, patrons.WaiveRequest{ChargeIDs: []int64{older}, Cents: 251, Reason: "hardship"})
		wantErr(t, err, stacks.EINVALID, "amount", "2.50 on the ticked lines")
	})

	t.Run("ErrWithoutReason", func(t *testing.T) {
		_, _, err := waive(admin, patrons.WaiveRequest{ChargeIDs: []int64{older}, Reason: " "})
		wantErr(t, err, stacks.EINVALID, "reason")
	})

	t.Run("ChosenLine", func(t *testing.T) {
		// The newer line, all it owes: the older one (the first a waiver used to
		// pay) is untouched.
		mustExec(t, d, `UPDATE staff_users SET can_waive = 1 WHERE id = ?`, desk.StaffID)
		id, cents, err := waive(desk, patrons.WaiveRequest{ChargeIDs: []int64{newer}, Reason: "returned in the book drop"})
		if err != nil {
			t.Fatal(err)
		}
		if cents != 300 {
			t.Errorf("waived %d, want 300", cents)
		}
		if got := owes(); got[older] != 250 || got[newer] != 0 {
			t.Errorf("owes %v, want the older line's 250 only", got)
		}
		if got := allocated(id); len(got) != 1 || got[newer] != 300 {
			t.Errorf("allocations %v, want 300 on line %d", got, newer)
		}
	})

	t.Run("PartOfALine", func(t *testing.T) {
		id, _, err := waive(admin, patrons.WaiveRequest{ChargeIDs: []int64{older}, Cents: 100, Reason: "first offence"})
		if err != nil {
			t.Fatal(err)
		}
		if got := owes(); got[older] != 150 {
			t.Errorf("owes %v, want 150 left on the older line", got)
		}
		if got := allocated(id); len(got) != 1 || got[older] != 100 {
			t.Errorf("allocations %v, want 100 on line %d", got, older)
		}
		var audit string
		read(t, d, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT detail FROM audit_log WHERE action = 'patron.waive' ORDER BY id DESC LIMIT 1`).Scan(&audit)
		})
		if want := "of 1.00 on lines"; !strings.Contains(audit, want) {
			t.Errorf("audit %q, want %q", audit, want)
		}
	})

	t.Run("ErrPermissionTakenAway", func(t *testing.T) {
		mustExec(t, d, `UPDATE staff_users SET can_waive = 0 WHERE id = ?`, desk.StaffID)
		_, _, err := waive(desk, patrons.WaiveRequest{ChargeIDs: []int64{older}, Reason: "hardship"})
		if stacks.ErrorCode(err) != stacks.EFORBIDDEN {
			t.Fatalf("permission taken away: %v, want forbidden", err)
		}
	})

	if vs := ledgerCheck(t, d); len(vs) != 0 {
		t.Fatalf("after waivers of chosen lines: %v", vs)
	}
}
