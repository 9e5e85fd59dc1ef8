package sip

import (
	"sync"
	"time"
)

// throttle counts attempts (SIP passwords, PINs) per key over a window, each before
// it is compared, and locks a key that reaches the limit for a while; a success
// forgets the count. It lives in the server's
// memory: SIP is served by one long-running process.
type throttle struct {
	limit   int
	window  time.Duration
	lockout time.Duration

	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	n           int
	first       time.Time
	lockedUntil time.Time
}

func newThrottle(limit int, window, lockout time.Duration) *throttle {
	return &throttle{limit: limit, window: window, lockout: lockout, keys: map[string]*failures{}}
}

// locked reports whether key is locked out at now.
func (t *throttle) locked(key string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.keys[key]
	return f != nil && now.Before(f.lockedUntil)
}

// reserve counts an attempt for key before its password or PIN is compared, and
// reports whether it may go on: not while key is locked (the attempt is then not
// counted). Checking the lock and counting happen under one lock, so attempts sent
// in parallel cannot all pass the check before the first failure is counted. The
// attempt that reaches the limit locks key (locks is true) and is still compared;
// a success forgets the count (succeed).
func (t *throttle) reserve(key string, now time.Time) (ok, locks bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.keys) > 10000 {
		t.sweep(now)
	}
	f := t.keys[key]
	if f != nil && now.Before(f.lockedUntil) {
		return false, false
	}
	if f == nil || now.Sub(f.first) > t.window {
		f = &failures{first: now}
		t.keys[key] = f
	}
	f.n++
	if f.n >= t.limit {
		f.lockedUntil = now.Add(t.lockout)
		f.n, f.first = 0, now
		return true, true
	}
	return true, false
}

// succeed forgets the failures of key.
func (t *throttle) succeed(key string) {
	t.mu.Lock()
	delete(t.keys, key)
	t.mu.Unlock()
}

// sweep drops the keys whose window and lockout are over, so that the map stays
// small whatever is thrown at it.
func (t *throttle) sweep(now time.Time) {
	for k, f := range t.keys {
		if now.Sub(f.first) > t.window && !now.Before(f.lockedUntil) {
			delete(t.keys, k)
		}
	}
}
