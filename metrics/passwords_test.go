package metrics_test

import (
	"context"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/metrics"
	"github.com/stacks-ils/stacks/passwords"
)

// TestPasswordCounters: /metrics reports the bcrypt work of the process's
// password pool, so that a rush of sign-ins and a pool too small for it can be
// seen: a hash and a comparison made through package passwords each move their
// counter, and the refusals are exposed beside them.
func TestPasswordCounters(t *testing.T) {
	d, err := db.Open(filepath.Join(t.TempDir(), "stacks.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := metrics.New(d)
	value := func(name string) float64 {
		t.Helper()
		s := m.Series(name)
		if len(s) != 1 {
			t.Fatalf("%s: %d series, want 1", name, len(s))
		}
		return s[0].Value
	}
	hashes, comparisons := value("stacks_password_hashes_total"), value("stacks_password_comparisons_total")
	if value("stacks_password_refused_total") < 0 {
		t.Error("a negative count of refusals")
	}
	ctx := context.Background()
	h, err := passwords.Hash(ctx, "open sesame", bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := passwords.Compare(ctx, h, "open sesame"); !ok || err != nil {
		t.Fatalf("compare: %v, %v", ok, err)
	}
	if got := value("stacks_password_hashes_total"); got < hashes+1 {
		t.Errorf("hashes %v after one more, was %v", got, hashes)
	}
	if got := value("stacks_password_comparisons_total"); got < comparisons+1 {
		t.Errorf("comparisons %v after one more, was %v", got, comparisons)
	}
}
