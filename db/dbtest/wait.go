package dbtest

import (
	"testing"
	"time"
)

// WaitLimit is how long WaitFor and Eventually wait: far longer than anything a
// test waits for takes on a loaded two-core machine, so that reaching it means
// the condition will not hold.
const WaitLimit = 30 * time.Second

// WaitFor polls cond until it holds and fails tb if it still does not after
// WaitLimit, saying it was waiting for what. Tests wait on the condition they
// need (a server listening, a goroutine blocked, a row written) this way instead
// of sleeping for a while and hoping. Call it from the test's goroutine; cond
// may end the test itself (tb.Fatal) when it sees the wait is hopeless, such as
// a server that exited.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	if !Eventually(cond) {
		tb.Fatalf("waited %s for %s", WaitLimit, what)
	}
}

// Eventually polls cond until it holds, for at most WaitLimit, and reports
// whether it held: WaitFor for a goroutine other than the test's, which may not
// end the test.
func Eventually(cond func() bool) bool {
	deadline := time.Now().Add(WaitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond) // the poll's interval
	}
	return true
}
