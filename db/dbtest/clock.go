package dbtest

import (
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// Monday is the tests' usual today, a Monday morning: the instant their demo
// libraries are created at and their clocks start from. A loan period of 21
// days later is a Monday too, a day the demo's branches open.
var Monday = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// Clock is a clock a test sets and moves, for a database (d.Now = c.Now) and
// the services and servers that read the time. It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// OpenAt is Open with the database's clock stopped at now.
func OpenAt(tb testing.TB, now time.Time, opt db.Options) *db.DB {
	tb.Helper()
	d := Open(tb, opt)
	d.Now = func() time.Time { return now }
	return d
}
