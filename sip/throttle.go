package sip

import (
	"sync"
	"time"
)

// throttle counts failures (wrong SIP passwords, wrong PINs) per key over a window,
// and locks a key that reaches the limit for a while. It lives in the server's
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

// fail counts a failure for key and reports whether that locked it.
func (t *throttle) fail(key string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.keys) > 10000 {
		t.sweep(now)
	}
	f := t.keys[key]
	if f == nil || now.Sub(f.first) > t.window {
		f = &failures{first: now}
		t.keys[key] = f
	}
	f.n++
	if f.n >= t.limit {
		f.lockedUntil = now.Add(t.lockout)
		f.n, f.first = 0, now
		return true
	}
	return false
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
