package staff_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// TestSignInStatements pins the statements of a staff sign-in: the locks and
// the known address read before its turn, one statement that counts it and
// refuses a locked key, the account read, and for a right password the count
// given back, the address remembered and the audit.
func TestSignInStatements(t *testing.T) {
	_, svc := signInEnv(t, "ann")
	for _, c := range []struct {
		name, password string
		want           int64
	}{
		{"Wrong", "wrong", 3},
		{"Right", "pass", 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, stats := db.WithStats(context.Background())
			_, err := svc.SignIn(ctx, "ann", c.password, "10.0.0.1", "")
			if c.password == "pass" && err != nil || c.password != "pass" && stacks.ErrorCode(err) != stacks.EUNAUTHORIZED {
				t.Fatalf("sign-in: %v", err)
			}
			if n := stats.Statements(); n != c.want {
				t.Errorf("%d statements, want %d", n, c.want)
			}
		})
	}
}
