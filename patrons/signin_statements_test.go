package patrons_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// TestSignInStatements pins the statements of a patron's sign-in: the locks
// and the known address read before its turn, one statement that counts it
// and refuses a locked key, the card read, and for a right PIN the count given
// back, the address remembered and the audit.
func TestSignInStatements(t *testing.T) {
	s := patrons.NewSignIn(mustOpenDB(t))
	for _, c := range []struct {
		name, pin string
		want      int64
	}{
		{"Wrong", "0000", 3},
		{"Right", "1234", 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, stats := db.WithStats(context.Background())
			_, err := s.Authenticate(ctx, "P0001", c.pin, "10.0.0.1")
			if c.pin == "1234" && err != nil || c.pin != "1234" && stacks.ErrorCode(err) != stacks.EUNAUTHORIZED {
				t.Fatalf("sign-in: %v", err)
			}
			if n := stats.Statements(); n != c.want {
				t.Errorf("%d statements, want %d", n, c.want)
			}
		})
	}
}
