// Package hardening holds the tests that run the real stacks binary under abuse and
// failure, as a deployment would meet them: a SIGTERM during a slow request, hundreds
// of slow-header connections (slowloris), a SIGKILL in the middle of a desk's
// checkouts and checkins, and backups taken while the desk works. Each test builds
// nothing itself: TestMain builds the binary once, as make build does, and each test
// starts it on its own copy of a small demo library, on 127.0.0.1.
//
// The tests run briefly in make test. STACKS_SOAK=1 (make soak) makes them longer
// and larger: more connections, more desks, several crashes in a row.
package hardening
