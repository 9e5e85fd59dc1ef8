package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/staff"
)

// TestInit: a library set up by stacks init, and nothing else, lends a book: its
// administrator signs in, a patron, a record and a copy are added the way the
// pages add them, and the desk checks the copy out with a due date 21 days on at
// the branch's closing time. A second init is refused, as are bad flags.
func TestInit(t *testing.T) {
	passwords.BcryptCost = bcrypt.MinCost
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.db")
	t.Setenv("STACKS_PASSWORD", "first-admin-pass")
	var out bytes.Buffer
	args := []string{"init", "--db", path, "--branch", "mai", "--branch-name", "Main Library", "--admin", "chief", "--time-zone", "Europe/Paris"}
	if err := run(ctx, args, &out, &out); err != nil || !strings.Contains(out.String(), "library set up in") {
		t.Fatalf("init: %v\n%s", err, out.String())
	}

	d, err := db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Now = func() time.Time { return time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC) } // a Monday
	chief, err := staff.NewService(d).Authenticate(ctx, "chief", "first-admin-pass", "127.0.0.1")
	if err != nil || !chief.IsAdmin() || chief.BranchCode != "MAI" {
		t.Fatalf("the administrator signs in: %+v, %v", chief, err)
	}
	var patronID int64
	err = d.Write(ctx, func(tx *db.Tx) error {
		p, err := patrons.Create(tx, chief.Actor(), patrons.Input{Card: "C0001", Surname: "Reader", CategoryCode: "ADULT", HomeBranchCode: "MAI"})
		if err != nil {
			return err
		}
		patronID = p.ID
		rec, err := catalog.CreateRecord(tx, chief.Actor(), catalog.RecordInput{Title: "First Book"})
		if err != nil {
			return err
		}
		_, err = catalog.AddItem(tx, chief.Actor(), rec, catalog.ItemInput{Barcode: "B0001", ItemTypeCode: "BOOK", HomeBranchCode: "MAI"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := circulation.NewService(d, nil).Checkout(ctx, circulation.CheckoutRequest{Actor: chief.Actor(), PatronID: patronID, Barcode: "B0001"})
	if err != nil {
		t.Fatalf("the new library's first checkout: %v", err)
	}
	// 21 days on is Monday 22 March; closing at 20:00 in Paris is 19:00 UTC.
	if want := time.Date(2027, 3, 22, 19, 0, 0, 0, time.UTC); !res.Loan.DueAt.Equal(want) {
		t.Errorf("due %v, want %v", res.Loan.DueAt, want)
	}
	d.Close()

	out.Reset()
	if err := run(ctx, args, &out, &out); err == nil || !strings.Contains(err.Error(), "already set up") {
		t.Errorf("a second init: %v", err)
	}
	for _, bad := range [][]string{
		{"init", "--db", filepath.Join(t.TempDir(), "a.db"), "--branch", "X"},
		{"init", "--db", filepath.Join(t.TempDir(), "b.db"), "--branch", "X Y", "--branch-name", "Somewhere"},
		{"init", "--db", filepath.Join(t.TempDir(), "c.db"), "--branch", "X", "--branch-name", "Somewhere", "--time-zone", "Mars/Olympus"},
	} {
		if err := run(ctx, bad, &out, &out); err == nil || exitCode(err) == 0 {
			t.Errorf("%v: %v, want a refusal", bad, err)
		}
	}
}
