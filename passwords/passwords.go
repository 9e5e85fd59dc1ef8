// Package passwords is the one place where Stacks compares a password or PIN with
// its bcrypt hash: staff sign-in, the My account password change, SIP2 logins and
// patron PINs over SIP2 all come here.
//
// bcrypt is slow on purpose (tens of milliseconds of one CPU at the default
// cost), so a burst of guesses, if every guess were compared at once, would take
// every CPU and stall the desk. Comparisons therefore run on a small pool (half
// the CPUs, at least one) with a short, bounded wait; an attempt that finds the
// pool and its queue full is refused at once with ErrBusy, never queued without
// bound. Gate bounds the attempts in flight per account and per address before
// they reach the pool.
package passwords

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
)

// ErrBusy refuses an attempt without comparing it: too many comparisons are
// running or waiting, or another attempt for the same account is in flight.
// Callers count it as an attempt and answer "try again in a moment".
var ErrBusy = stacks.Errorf(stacks.ETOOMANY, "Too many sign-ins are being checked at once. Wait a moment and try again.")

// Pool runs bcrypt comparisons, at most Size at a time, with at most MaxWaiting
// more waiting, each for at most MaxWait.
type Pool struct {
	slots      chan struct{}
	maxWaiting int64
	maxWait    time.Duration

	waiting  atomic.Int64
	compared atomic.Int64
	hashed   atomic.Int64
	refused  atomic.Int64
}

// NewPool returns a pool running size comparisons at a time (at least 1), with
// maxWaiting more allowed to wait up to maxWait for a turn.
func NewPool(size, maxWaiting int, maxWait time.Duration) *Pool {
	size = max(size, 1)
	return &Pool{slots: make(chan struct{}, size), maxWaiting: int64(max(maxWaiting, 0)), maxWait: maxWait}
}

// DefaultSize is the size of Default: half the CPUs Go uses, at least one, so
// that guesses can never take every CPU from the desk.
func DefaultSize() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// Default is the pool Compare uses: up to 256 attempts waiting (the SIP server's
// connections at most: a library's terminals all log in at once after a
// restart), each for up to 3 s, or as long as WithWait allows. At about 65 ms a
// comparison (cost 10 on this project's 2-core machine), a slot compares about
// 15 a second; an attempt that would wait longer is refused (ErrBusy), not
// queued for ever.
var Default = NewPool(DefaultSize(), 256, 3*time.Second)

type waitKey struct{}

// WithWait returns a context under which an attempt may wait up to d for a slot,
// instead of the pool's own wait (still never past ctx's deadline): a SIP
// terminal waits seconds for its answer, and a login refused for a busy pool
// costs it more than the wait.
func WithWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, waitKey{}, d)
}

// wait is how long an attempt under ctx may wait for a slot.
func (p *Pool) wait(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(waitKey{}).(time.Duration); ok {
		return d
	}
	return p.maxWait
}

// Compare reports whether password matches the bcrypt hash, on the Default pool.
// It returns ErrBusy, without comparing, when the pool is full.
func Compare(ctx context.Context, hash, password string) (bool, error) {
	return Default.Compare(ctx, hash, password)
}

// Compare reports whether password matches the bcrypt hash. It returns ErrBusy,
// without comparing, when every slot is taken and the queue is full, or when no
// slot came free within the pool's wait (or WithWait's) or before ctx ended.
func (p *Pool) Compare(ctx context.Context, hash, password string) (bool, error) {
	if err := p.acquire(ctx); err != nil {
		p.refused.Add(1)
		return false, err
	}
	defer func() { <-p.slots }()
	p.compared.Add(1)
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil, nil
}

// Hash returns the bcrypt hash of password at cost, made in one of the pool's
// slots: a new PIN or password costs as much CPU as a comparison, so it waits
// its turn with them. It returns ErrBusy, without hashing, when the pool is full.
func (p *Pool) Hash(ctx context.Context, password string, cost int) (string, error) {
	if err := p.acquire(ctx); err != nil {
		p.refused.Add(1)
		return "", err
	}
	defer func() { <-p.slots }()
	p.hashed.Add(1)
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// Hash hashes password at cost on the Default pool.
func Hash(ctx context.Context, password string, cost int) (string, error) {
	return Default.Hash(ctx, password, cost)
}

// Size is the number of hashes or comparisons the pool runs at a time.
func (p *Pool) Size() int { return cap(p.slots) }

// Hashes is the number of hashes the pool has made: /metrics reports Default's,
// and tests check that a refused change made none.
func (p *Pool) Hashes() int64 { return p.hashed.Load() }

// Hashes is Default's count of hashes made.
func Hashes() int64 { return Default.Hashes() }

func (p *Pool) acquire(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
	}
	if p.waiting.Add(1) > p.maxWaiting {
		p.waiting.Add(-1)
		return ErrBusy
	}
	defer p.waiting.Add(-1)
	t := time.NewTimer(p.wait(ctx))
	defer t.Stop()
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-t.C:
		return ErrBusy
	case <-ctx.Done():
		return ErrBusy
	}
}

// Comparisons is the number of bcrypt comparisons the pool has run: /metrics
// reports Default's, and tests count what a burst of guesses cost.
func (p *Pool) Comparisons() int64 { return p.compared.Load() }

// Refused is the number of attempts the pool refused with ErrBusy (/metrics
// reports Default's: a pool too small for its rushes).
func (p *Pool) Refused() int64 { return p.refused.Load() }

// Comparisons is Default's count of comparisons run.
func Comparisons() int64 { return Default.Comparisons() }

// Gate bounds the attempts in flight under each key: an attempt enters under
// several keys at once (an account and an address), each with its own limits, or
// under none. A few attempts may wait a short while for their turn (terminals that
// share an account log in together); beyond those, an attempt is refused at once. Guesses sent in parallel for one account are then refused or taken one at
// a time, instead of all being compared before the first failure is counted. The
// zero Gate is ready to use.
type Gate struct {
	mu      sync.Mutex
	keys    map[string]*gateKey
	changed chan struct{} // closed, and replaced, whenever an attempt leaves
}

type gateKey struct{ inFlight, waiting int }

// Key is a key of Gate.Enter: at most Max attempts in flight under Name, and at
// most MaxWaiting more waiting for a turn.
type Key struct {
	Name       string
	Max        int
	MaxWaiting int
}

// Enter admits an attempt under every key, or under none (ok false) when one of
// them has Max attempts in flight and MaxWaiting waiting, or when no turn came
// within wait or before ctx ended. leave, called once when the attempt is over,
// lets the next one in.
func (g *Gate) Enter(ctx context.Context, wait time.Duration, keys ...Key) (leave func(), ok bool) {
	var deadline <-chan time.Time
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.keys == nil {
		g.keys = map[string]*gateKey{}
	}
	for {
		if g.free(keys) {
			for _, k := range keys {
				g.key(k.Name).inFlight++
			}
			return g.leaver(keys), true
		}
		for _, k := range keys {
			if gk := g.keys[k.Name]; gk != nil && gk.inFlight >= max(k.Max, 1) && gk.waiting >= k.MaxWaiting {
				g.tidy(keys)
				return nil, false
			}
		}
		if deadline == nil {
			if wait <= 0 {
				return nil, false
			}
			t := time.NewTimer(wait)
			defer t.Stop()
			deadline = t.C
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		changed := g.changed
		for _, k := range keys {
			g.key(k.Name).waiting++
		}
		g.mu.Unlock()
		var timedOut bool
		select {
		case <-changed:
		case <-deadline:
			timedOut = true
		case <-ctx.Done():
			timedOut = true
		}
		g.mu.Lock()
		for _, k := range keys {
			g.keys[k.Name].waiting--
		}
		if timedOut {
			g.tidy(keys)
			return nil, false
		}
	}
}

// free reports whether every key has room for one more attempt in flight.
func (g *Gate) free(keys []Key) bool {
	for _, k := range keys {
		if gk := g.keys[k.Name]; gk != nil && gk.inFlight >= max(k.Max, 1) {
			return false
		}
	}
	return true
}

func (g *Gate) key(name string) *gateKey {
	gk := g.keys[name]
	if gk == nil {
		gk = &gateKey{}
		g.keys[name] = gk
	}
	return gk
}

// tidy forgets the keys nobody is in or waiting for, so that the map stays small.
func (g *Gate) tidy(keys []Key) {
	for _, k := range keys {
		if gk := g.keys[k.Name]; gk != nil && gk.inFlight <= 0 && gk.waiting <= 0 {
			delete(g.keys, k.Name)
		}
	}
}

func (g *Gate) leaver(keys []Key) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			for _, k := range keys {
				g.keys[k.Name].inFlight--
			}
			g.tidy(keys)
			if g.changed != nil {
				close(g.changed)
				g.changed = nil
			}
		})
	}
}
