package staff_test

import (
	"context"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/staff"
)

// TestBranch: a sign-in works at the branch it chose (its home branch when it
// chose none), an unknown branch is refused before the password counts, the
// cache and FindAt read an account at a branch (its home branch when that
// branch is gone), and a change of branch is audited only when it changes.
func TestBranch(t *testing.T) {
	passwords.BcryptCost = bcrypt.MinCost
	ctx := context.Background()
	d := dbtest.Open(t, db.Options{})
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := d.Read(ctx, func(tx *db.Tx) error { return tx.QueryRow(q, args...).Scan(&n) }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var ann *staff.User
	var eas int64
	err := d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('CEN', 'Central'), ('EAS', 'Eastside'), ('OLD', 'Old branch')`); err != nil {
			return err
		}
		if err := tx.QueryRow(`SELECT id FROM branches WHERE code = 'EAS'`).Scan(&eas); err != nil {
			return err
		}
		var err error
		ann, err = staff.Create(tx, staff.NewUser{Username: "ann", DisplayName: "Ann", Password: "pass", Role: staff.RoleCirculation, BranchCode: "CEN"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := staff.NewService(d)

	t.Run("Home", func(t *testing.T) {
		u, err := svc.SignIn(ctx, "ann", "pass", "10.0.0.1", "")
		if err != nil {
			t.Fatal(err)
		}
		if u.BranchCode != "CEN" || u.HomeBranchCode != "CEN" || u.AwayFromHome() || u.Actor().BranchID != u.HomeBranchID {
			t.Errorf("signed in without a branch: %+v", u)
		}
	})

	t.Run("Chosen", func(t *testing.T) {
		u, err := svc.SignIn(ctx, "ann", "pass", "10.0.0.1", "eas")
		if err != nil {
			t.Fatal(err)
		}
		if u.BranchID != eas || u.BranchName != "Eastside" || u.HomeBranchCode != "CEN" || !u.AwayFromHome() || u.Actor().BranchID != eas {
			t.Errorf("signed in at Eastside: %+v", u)
		}
		if n := count(`SELECT count(*) FROM audit_log WHERE action = 'staff.login' AND detail = 'from 10.0.0.1 at Eastside (EAS)'`); n != 1 {
			t.Errorf("%d sign-ins audited at Eastside, want 1", n)
		}
	})

	t.Run("ErrUnknownBranch", func(t *testing.T) {
		_, err := svc.SignIn(ctx, "ann", "pass", "10.0.0.2", "NOPE")
		if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != "branch" {
			t.Fatalf("sign in at NOPE: %v, want a field error on branch", err)
		}
		if n := count(`SELECT count(*) FROM login_throttle WHERE key = 'addr:10.0.0.2'`); n != 0 {
			t.Error("a sign-in refused for its branch was counted")
		}
	})

	t.Run("Cache", func(t *testing.T) {
		c := staff.NewCache()
		for _, tc := range []struct {
			branchID int64
			want     string
		}{{0, "CEN"}, {eas, "EAS"}, {0, "CEN"}, {99999, "CEN"}} {
			u, err := c.ByID(ctx, d, ann.ID, tc.branchID)
			if err != nil {
				t.Fatal(err)
			}
			if u.BranchCode != tc.want || u.HomeBranchCode != "CEN" {
				t.Errorf("at branch %d: works at %s (home %s), want %s", tc.branchID, u.BranchCode, u.HomeBranchCode, tc.want)
			}
		}
	})

	t.Run("ChangeBranch", func(t *testing.T) {
		u, err := svc.SignIn(ctx, "ann", "pass", "10.0.0.1", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ChangeBranch(ctx, u, "CEN"); err != nil {
			t.Fatal(err)
		}
		if n := count(`SELECT count(*) FROM audit_log WHERE action = 'staff.branch'`); n != 0 {
			t.Errorf("a change to the same branch audited %d times", n)
		}
		b, err := svc.ChangeBranch(ctx, u, "EAS")
		if err != nil || b.ID != eas || b.Name != "Eastside" {
			t.Fatalf("change to EAS: %+v, %v", b, err)
		}
		if n := count(`SELECT count(*) FROM audit_log WHERE action = 'staff.branch' AND staff_id = ? AND detail = 'from Central (CEN) to Eastside (EAS)'`, ann.ID); n != 1 {
			t.Errorf("%d changes audited from Central to Eastside, want 1", n)
		}
		if _, err := svc.ChangeBranch(ctx, u, "NOPE"); stacks.ErrorField(err) != "branch" {
			t.Errorf("change to NOPE: %v, want a field error on branch", err)
		}
	})
}
