// Package waittest is how tests wait: on the condition they need (a server
// listening, a goroutine blocked, a row written), polled with a generous
// deadline, instead of sleeping for a while and hoping. A test that waits on a
// channel needs none of this.
//
// It is a package of its own, apart from db/dbtest, because make test chooses
// the packages it runs again on PostgreSQL by their importing db/dbtest or
// demo/demotest (scripts/test-engines.sh): waiting says nothing about the
// engine.
package waittest

import (
	"testing"
	"time"
)

// Limit is how long For and Eventually wait: far longer than anything a test
// waits for takes on a loaded two-core machine, so that reaching it means the
// condition will not hold.
const Limit = 30 * time.Second

// For polls cond until it holds and fails tb if it still does not after Limit,
// saying it was waiting for what. Call it from the test's goroutine; cond may
// end the test itself (tb.Fatal) when it sees the wait is hopeless, such as a
// server that exited.
func For(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	if !Eventually(cond) {
		tb.Fatalf("waited %s for %s", Limit, what)
	}
}

// Eventually polls cond until it holds, for at most Limit, and reports whether
// it held: For for a goroutine other than the test's, which may not end the
// test.
func Eventually(cond func() bool) bool {
	deadline := time.Now().Add(Limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond) // the poll's interval
	}
	return true
}
