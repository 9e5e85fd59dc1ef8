package patrons_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

func TestPIN(t *testing.T) {
	d := mustOpenDB(t)
	p := mustFindByCard(t, d, "P0001")
	hash := func() string {
		var h string
		read(t, d, func(tx *db.Tx) (err error) {
			h, err = patrons.PINHash(tx, p.ID)
			return err
		})
		return h
	}

	t.Run("Demo", func(t *testing.T) {
		if h := hash(); !checkPIN(t, h, "1234") || checkPIN(t, h, "1235") || checkPIN(t, h, "") {
			t.Errorf("the demo PIN hash %q does not match 1234 alone", h)
		}
	})
	t.Run("Set", func(t *testing.T) {
		if err := write(d, func(tx *db.Tx) error { return setPIN(tx, p.ID, "8642") }); err != nil {
			t.Fatal(err)
		}
		if h := hash(); !checkPIN(t, h, "8642") || checkPIN(t, h, "1234") {
			t.Errorf("after setting PIN 8642, the hash %q", h)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, pin := range []string{"", "123", "12 34", "12|34", "123456789012345678901234567890123"} {
			err := write(d, func(tx *db.Tx) error { return setPIN(tx, p.ID, pin) })
			if stacks.ErrorCode(err) != stacks.EINVALID {
				t.Errorf("setting PIN %q = %v, want invalid", pin, err)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		err := write(d, func(tx *db.Tx) error { return setPIN(tx, 99999, "8642") })
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("setting the PIN of no patron = %v", err)
		}
		read(t, d, func(tx *db.Tx) error {
			if _, err := patrons.PINHash(tx, 99999); stacks.ErrorCode(err) != stacks.ENOTFOUND {
				t.Errorf("PINHash for no patron = %v", err)
			}
			return nil
		})
	})
	t.Run("NoPIN", func(t *testing.T) {
		if checkPIN(t, "", "") || checkPIN(t, "", "1234") {
			t.Error("a patron without a PIN matched")
		}
	})
}

// checkPIN compares on the pool, failing the test if it is busy.
func checkPIN(tb testing.TB, hash, pin string) bool {
	tb.Helper()
	ok, err := patrons.CheckPIN(context.Background(), hash, pin)
	if err != nil {
		tb.Fatalf("CheckPIN: %v", err)
	}
	return ok
}
