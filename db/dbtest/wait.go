package dbtest

import (
	"testing"
	"time"
)

// WaitLimit is how long WaitFor waits: far longer than anything a test waits
// for takes on a loaded two-core machine, so that reaching it means the
// condition will not hold.
const WaitLimit = 30 * time.Second

// WaitFor polls cond until it holds and fails tb if it still does not after
// WaitLimit, saying it was waiting for what. Tests wait on the condition they
// need (a server listening, a goroutine done, a row written) this way instead
// of sleeping for a while and hoping.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(WaitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s", WaitLimit, what)
		}
		time.Sleep(5 * time.Millisecond) // the poll's interval
	}
}
