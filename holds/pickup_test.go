package holds_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
)

func TestChangePickup(t *testing.T) {
	d := mustOpenDB(t)
	ids := addHolds(t, d, hold{card: "P0001", status: "waiting", trapped: "I00001"}, hold{card: "P0002"}, hold{card: "P0003"})
	patron := stacks.Actor{Name: "opac:P0002", BranchID: 1}
	change := func(id int64, code string) error {
		return d.Write(context.Background(), func(tx *db.Tx) error { return holds.ChangePickup(tx, patron, id, code) })
	}

	t.Run("OK", func(t *testing.T) {
		if err := change(ids[1], "eas"); err != nil {
			t.Fatal(err)
		}
		if got := queryString(t, d, `SELECT b.code FROM holds h JOIN branches b ON b.id = h.pickup_branch_id WHERE h.id = ?`, ids[1]); got != "EAS" {
			t.Errorf("pickup %s, want EAS", got)
		}
		if got := queryString(t, d, `SELECT detail FROM audit_log WHERE action = 'hold.pickup' AND object_id = ?`, ids[1]); got != "pickup EAS" {
			t.Errorf("audit %q", got)
		}
		if got := queryString(t, d, `SELECT priority FROM holds WHERE id = ?`, ids[1]); got != "1" {
			t.Errorf("the hold's place changed: %s", got)
		}
	})
	t.Run("ErrUnknownBranch", func(t *testing.T) {
		err := change(ids[1], "NOPE")
		if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != "pickup" {
			t.Errorf("unknown branch: %v", err)
		}
	})
	t.Run("ErrTrapped", func(t *testing.T) {
		if err := change(ids[0], "WES"); stacks.ErrorCode(err) != stacks.ECONFLICT {
			t.Errorf("a waiting hold's pickup changed: %v", err)
		}
	})
	t.Run("ErrNoHold", func(t *testing.T) {
		if err := change(99999, "CEN"); stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("no such hold: %v", err)
		}
	})
	t.Run("QueueLength", func(t *testing.T) {
		var n int
		err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
			n, err = holds.QueueLength(tx, id(t, d, `SELECT record_id FROM items WHERE barcode = 'I00001'`))
			return err
		})
		if err != nil || n != 3 {
			t.Errorf("queue length %d (%v), want 3", n, err)
		}
	})
}
