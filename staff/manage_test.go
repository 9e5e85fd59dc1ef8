package staff_test

import (
	"context"
	"os"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/staff"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// TestManage: Accounts, SetActive (never oneself, never the last active
// administrator) and a new password.
func TestManage(t *testing.T) {
	passwords.BcryptCost = bcrypt.MinCost
	ctx := context.Background()
	d := dbtest.Open(t, db.Options{})
	write := func(fn func(tx *db.Tx) error) error { return d.Write(ctx, fn) }
	users := map[string]*staff.User{}
	err := write(func(tx *db.Tx) error {
		if _, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('CEN', 'Central')`); err != nil {
			return err
		}
		for _, n := range []staff.NewUser{
			{Username: "boss", DisplayName: "Boss", Password: "pass1", Role: staff.RoleAdmin, BranchCode: "CEN"},
			{Username: "ann", DisplayName: "Ann", Password: "pass2", Role: staff.RoleCirculation, BranchCode: "CEN"},
		} {
			u, err := staff.Create(tx, n)
			if err != nil {
				return err
			}
			users[n.Username] = u
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	boss, ann := users["boss"], users["ann"]
	svc := staff.NewService(d)

	if err := svc.SetActive(ctx, boss.Actor(), boss.ID, false); stacks.ErrorCode(err) != stacks.EFORBIDDEN {
		t.Errorf("deactivate oneself: %v, want EFORBIDDEN", err)
	}
	// The last active administrator, deactivated by someone else (a tool acting
	// as the system): refused.
	if err := svc.SetActive(ctx, stacks.System, boss.ID, false); stacks.ErrorCode(err) != stacks.ECONFLICT {
		t.Errorf("deactivate the last administrator: %v, want ECONFLICT", err)
	}
	if err := svc.SetActive(ctx, boss.Actor(), ann.ID, false); err != nil {
		t.Fatal(err)
	}
	if err := svc.SetActive(ctx, boss.Actor(), 9999, false); stacks.ErrorCode(err) != stacks.ENOTFOUND {
		t.Errorf("no such account: %v", err)
	}
	accounts, err := svc.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list := accounts.Users
	if len(list) != 2 || list[0].Username != "boss" || !list[0].Active || list[1].Username != "ann" || list[1].Active {
		t.Errorf("list: %+v, want boss (active) then ann (deactivated)", list)
	}
	if _, err := svc.Authenticate(ctx, "ann", "pass2", "127.0.0.1"); err == nil {
		t.Error("a deactivated account signed in")
	}

	if err := svc.ResetPassword(ctx, stacks.System, boss.ID, "abc"); stacks.ErrorField(err) != "password" {
		t.Errorf("a 3-character password: %v", err)
	}
	if err := svc.ResetPassword(ctx, stacks.System, boss.ID, "fresh-pass"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, "boss", "fresh-pass", "127.0.0.1"); err != nil {
		t.Errorf("the new password: %v", err)
	}
	if _, err := svc.Authenticate(ctx, "boss", "pass1", "127.0.0.1"); err == nil {
		t.Error("the old password still signs in")
	}

	// Create stores a password hashed beforehand as it is.
	pre, err := passwords.HashPassword("hashed-first")
	if err != nil {
		t.Fatal(err)
	}
	err = write(func(tx *db.Tx) error {
		_, err := staff.Create(tx, staff.NewUser{Username: "cal", DisplayName: "Cal", Password: "hashed-first", PasswordHash: pre, Role: staff.RoleCirculation, BranchCode: "CEN"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT password_hash FROM staff_users WHERE username = 'cal'`).Scan(&stored)
	}); err != nil || stored != pre {
		t.Errorf("stored hash %q (%v), want the one given", stored, err)
	}
	if _, err := svc.Authenticate(ctx, "cal", "hashed-first", "127.0.0.1"); err != nil {
		t.Errorf("an account created with a hash: %v", err)
	}
}
