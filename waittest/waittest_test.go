package waittest_test

import (
	"testing"

	"github.com/stacks-ils/stacks/waittest"
)

// TestFor: For and Eventually return once the condition holds, polling it.
func TestFor(t *testing.T) {
	polls := 0
	waittest.For(t, "the third poll", func() bool { polls++; return polls == 3 })
	if polls != 3 {
		t.Fatalf("For returned after %d polls, want 3", polls)
	}
	polls = 0
	if !waittest.Eventually(func() bool { polls++; return polls == 2 }) || polls != 2 {
		t.Fatalf("Eventually returned after %d polls, want true after 2", polls)
	}
}
