// Package load is the check-in/check-out (CICO) load test, after the
// one FOLIO's performance team publishes: N virtual users, each a desk (over HTTP,
// as a browser does) or a self-check terminal (over SIP2), serve patrons from their
// own share of the library, lending items and taking them back, with or without a
// person's think time between scans, for a duration or a count. It reports each
// operation's count, average, median, p95, p99, longest, errors and transactions
// a second, as a table and as JSON.
//
// It also holds the small tools make load needs beside it: many concurrent
// keep-alive connections against one page (Flood), the bare net/http server they
// are compared with (ServeHello), and the suite that starts servers and runs every
// scenario (Suite).
//
// Every target must be on this machine (CheckLoopback).
package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Op is a measured operation.
type Op string

// The measured operations. Check-out and check-in are the transactions counted in
// the total; the patron scan that starts each visit is reported beside them.
const (
	OpCheckout Op = "check-out"
	OpCheckin  Op = "check-in"
	OpPatron   Op = "patron"
)

// Ops lists the operations in report order.
var Ops = []Op{OpCheckout, OpCheckin, OpPatron}

// Result is what a terminal learned from one operation beside its wall time.
type Result struct {
	// Server is the server's own time for the operation (Server-Timing app, summed
	// over the requests); Known is false when the protocol does not say.
	Server time.Duration
	Known  bool
}

// Terminal is one virtual user's connection to the server: a signed-in desk or a
// logged-in SIP2 terminal. Each method is one transaction as a person experiences
// it and returns an error for an unexpected answer. A Terminal is used by one
// goroutine.
type Terminal interface {
	// Patron starts serving the share's patron (the card is scanned).
	Patron(ctx context.Context, s *Share) (Result, error)
	// Checkout lends an item to the patron being served.
	Checkout(ctx context.Context, s *Share, barcode string) (Result, error)
	// Checkin returns an item.
	Checkin(ctx context.Context, barcode string) (Result, error)
	// EndVisit ends the patron's visit and clears the check-in list, as staff do
	// between patrons; it is not measured.
	EndVisit(ctx context.Context) error
	Close() error
}

// Dialer signs in virtual user i (0-based) and returns its terminal. Sign-in is
// not measured: it runs before the measured time starts.
type Dialer func(ctx context.Context, i int) (Terminal, error)

// RoundRobin spreads the virtual users over several servers: user i signs in
// through dialers[i % len(dialers)] and stays there for the whole run, as behind
// a balancer that keeps each desk on one server. Stacks' sessions live in the
// database, so a balancer need not be sticky; pinning each user keeps the run
// repeatable and each server's share of the users equal.
func RoundRobin(dialers ...Dialer) Dialer {
	if len(dialers) == 1 {
		return dialers[0]
	}
	return func(ctx context.Context, i int) (Terminal, error) {
		return dialers[i%len(dialers)](ctx, i)
	}
}

// Config is one run.
type Config struct {
	// Users is the number of virtual users, each with its own terminal and share.
	Users int
	// Shares are the users' shares; user i gets Shares[i].
	Shares []Share
	// Dial signs in each user.
	Dial Dialer
	// Think is the mean pause before each scan (patron card, item barcode); each
	// pause is drawn uniformly from Think ± Jitter×Think. 0 is a saturation run.
	Think time.Duration
	// Jitter is the spread of the pauses as a fraction of Think (default 0.5).
	Jitter float64
	// Duration bounds the measured time; Count bounds the number of check-outs and
	// check-ins. At least one must be set; the run stops at the first reached.
	Duration time.Duration
	Count    int
	// Warmup, if set, runs the same workload unmeasured for this long before
	// the measured time starts: a server that has been running has its
	// database connections open, their statements prepared and planned, and
	// its caches filled, which a server started a minute ago has not. Nothing
	// of the warm-up is counted but its errors (Report.WarmupErrors), and
	// Count's check-outs and check-ins are counted from its end.
	Warmup time.Duration
	// LoginConcurrency is how many users sign in at once (default 4): staff
	// passwords are bcrypt hashes, deliberately slow to check, so a crowd of
	// simultaneous sign-ins would only queue on the CPU.
	LoginConcurrency int
	// Timeout bounds each transaction (default 30 s).
	Timeout time.Duration
	// Seed seeds the think-time jitter (0: a fixed default, so runs repeat).
	Seed uint64
	// Progress, if set, receives a line about each phase.
	Progress func(format string, args ...any)
	// OnStart, if set, is called as the measured time starts (every user signed
	// in); OnStop once every user has finished its last measured transaction,
	// before they put back what they still have out.
	OnStart, OnStop func()
}

// Report is a run's outcome.
type Report struct {
	// Ops are the statistics by operation.
	Ops map[Op]Summary
	// Elapsed is the measured time: from the moment every user was signed in to
	// the end of the last measured transaction.
	Elapsed time.Duration
	// LoginTime is how long signing every user in took (not measured).
	LoginTime time.Duration
	// TotalTPS is check-outs and check-ins a second.
	TotalTPS float64
	// Errors are the distinct error messages seen, with how often (at most 20 kinds).
	Errors map[string]int
	// GaveUp counts users that stopped early after too many failures in a row.
	GaveUp int
	// Unmeasured counts check-ins made only to put items back: after a failed
	// check-out or check-in, and for items still out when the run ended.
	Unmeasured int
	// Warmup is Config.Warmup; WarmupErrors counts the operations that failed
	// during it (they are in no other figure).
	Warmup       time.Duration
	WarmupErrors int
}

// Transactions returns the successful check-outs and check-ins.
func (r *Report) Transactions() int { return r.Ops[OpCheckout].Count + r.Ops[OpCheckin].Count }

// ErrorCount returns the failed operations of every kind.
func (r *Report) ErrorCount() int {
	n := 0
	for _, s := range r.Ops {
		n += s.Errors
	}
	return n
}

// ErrTooFewShares is returned when the library has fewer shares than users.
var ErrTooFewShares = errors.New("fewer shares than virtual users")

// Around adds start and stop at the measured time's edges, after what
// OnStart and OnStop already do there.
func (c *Config) Around(start, stop func()) {
	prevStart, prevStop := c.OnStart, c.OnStop
	c.OnStart = func() {
		if prevStart != nil {
			prevStart()
		}
		start()
	}
	c.OnStop = func() {
		if prevStop != nil {
			prevStop()
		}
		stop()
	}
}

// Run runs the CICO workflow for cfg.Users virtual users and returns the report.
// Each user loops over visits: scan the patron, check out each item of its share,
// end the visit, check each one in. When the run ends (duration or count reached,
// or ctx cancelled) a user finishes the transaction in progress and returns what it
// still has out, unmeasured, so that the library is left as it was found.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Users <= 0 {
		return nil, fmt.Errorf("users must be at least 1, got %d", cfg.Users)
	}
	if len(cfg.Shares) < cfg.Users {
		return nil, fmt.Errorf("%w: %d shares for %d users", ErrTooFewShares, len(cfg.Shares), cfg.Users)
	}
	for i, s := range cfg.Shares[:cfg.Users] {
		if s.Card == "" || len(s.Barcodes) == 0 {
			return nil, fmt.Errorf("share %d has no patron card or no items", i+1)
		}
	}
	if cfg.Duration <= 0 && cfg.Count <= 0 {
		return nil, errors.New("set a duration or a count: a load test must stop by itself")
	}
	if cfg.Dial == nil {
		return nil, errors.New("no way to connect (Dial is nil)")
	}
	if cfg.Jitter == 0 {
		cfg.Jitter = 0.5
	}
	if cfg.LoginConcurrency <= 0 {
		cfg.LoginConcurrency = 4
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Seed == 0 {
		cfg.Seed = 8
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}

	// Sign everyone in first, a few at a time.
	loginStart := time.Now()
	terms := make([]Terminal, cfg.Users)
	defer func() {
		for _, t := range terms {
			if t != nil {
				t.Close()
			}
		}
	}()
	var (
		loginWG  sync.WaitGroup
		loginErr error
		loginMu  sync.Mutex
		sem      = make(chan struct{}, cfg.LoginConcurrency)
	)
	loginCtx, cancelLogin := context.WithCancel(ctx)
	for i := range terms {
		loginWG.Add(1)
		go func() {
			defer loginWG.Done()
			select {
			case sem <- struct{}{}:
			case <-loginCtx.Done():
				return
			}
			defer func() { <-sem }()
			t, err := cfg.Dial(loginCtx, i)
			loginMu.Lock()
			defer loginMu.Unlock()
			if err != nil {
				if loginErr == nil {
					loginErr = fmt.Errorf("sign in virtual user %d: %w", i+1, err)
					cancelLogin()
				}
				return
			}
			terms[i] = t
		}()
	}
	loginWG.Wait()
	cancelLogin()
	if loginErr != nil {
		return nil, loginErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &Report{LoginTime: time.Since(loginStart), Warmup: cfg.Warmup}
	if cfg.Warmup > 0 {
		progress("%d users signed in in %s; warming up for %s (not measured)", cfg.Users, rep.LoginTime.Round(time.Millisecond), cfg.Warmup)
	} else {
		progress("%d users signed in in %s; measuring", cfg.Users, rep.LoginTime.Round(time.Millisecond))
	}

	// The warm-up, then the measured part: the users run from now on; what
	// ends before start is not recorded (user.measure).
	recs := map[Op]*recorder{OpCheckout: {}, OpCheckin: {}, OpPatron: {}}
	runCtx := ctx
	var cancelRun context.CancelFunc = func() {}
	if cfg.Duration > 0 {
		runCtx, cancelRun = context.WithTimeout(ctx, cfg.Warmup+cfg.Duration)
	}
	defer cancelRun()
	var tickets, gaveUp, unmeasured, warmupErrors atomic.Int64
	start := time.Now().Add(cfg.Warmup)
	lastEnd := make([]time.Time, cfg.Users)
	// OnStart runs once, as the measured time starts: at once, or when the
	// warm-up ends, or (a run cut short during its warm-up) before OnStop.
	var startOnce sync.Once
	measuring := func() {
		startOnce.Do(func() {
			if cfg.Warmup > 0 {
				progress("warm-up over; measuring")
			}
			if cfg.OnStart != nil {
				cfg.OnStart()
			}
		})
	}
	if cfg.Warmup > 0 {
		t := time.AfterFunc(cfg.Warmup, measuring)
		defer t.Stop()
	} else {
		measuring()
	}
	var wg, running sync.WaitGroup
	for i := range terms {
		wg.Add(1)
		running.Add(1)
		go func() {
			defer wg.Done()
			u := &user{
				cfg: &cfg, term: terms[i], share: &cfg.Shares[i], recs: recs, tickets: &tickets,
				rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i))), out: map[string]bool{}, unmeasured: &unmeasured,
				measureFrom: start, warmupErrors: &warmupErrors,
			}
			u.run(runCtx)
			lastEnd[i] = u.lastEnd
			if u.failures >= maxFailuresInRow {
				gaveUp.Add(1)
			}
			running.Done()
			u.cleanup()
		}()
	}
	running.Wait()
	measuring()
	if cfg.OnStop != nil {
		cfg.OnStop()
	}
	wg.Wait()

	end := start
	for _, t := range lastEnd {
		if t.After(end) {
			end = t
		}
	}
	rep.Elapsed = end.Sub(start)
	rep.Ops = map[Op]Summary{}
	rep.Errors = map[string]int{}
	for op, r := range recs {
		rep.Ops[op] = r.summary(rep.Elapsed)
		for msg, n := range r.errorSeen {
			rep.Errors[string(op)+": "+msg] += n
		}
	}
	rep.TotalTPS = Rate(rep.Transactions(), rep.Elapsed)
	rep.GaveUp = int(gaveUp.Load())
	rep.Unmeasured = int(unmeasured.Load())
	rep.WarmupErrors = int(warmupErrors.Load())
	return rep, nil
}

// user is one virtual user's loop.
type user struct {
	cfg     *Config
	term    Terminal
	share   *Share
	recs    map[Op]*recorder
	tickets *atomic.Int64
	rng     *rand.Rand
	// out are the items this user has lent and not yet returned; true when the
	// check-out failed, so that whether it went through is unknown.
	out     map[string]bool
	lastEnd time.Time
	// failures counts failed transactions in a row.
	failures int
	// unmeasured counts the run's check-ins made only to put items back.
	unmeasured *atomic.Int64
	// measureFrom is the end of the warm-up: a transaction that starts before
	// it is not recorded, and its failure counts in warmupErrors.
	measureFrom  time.Time
	warmupErrors *atomic.Int64
}

// maxFailuresInRow stops a user whose transactions keep failing (a server that
// went away, a share that cannot work): the run still ends by itself even when
// bounded only by a count.
const maxFailuresInRow = 50

// take reports whether another measured check-out or check-in may start.
func (u *user) take() bool {
	if u.cfg.Count <= 0 || time.Now().Before(u.measureFrom) {
		return true
	}
	return u.tickets.Add(1) <= int64(u.cfg.Count)
}

// think pauses before a scan; false when the run is over.
func (u *user) think(ctx context.Context) bool {
	if ctx.Err() != nil || u.failures >= maxFailuresInRow {
		return false
	}
	if u.cfg.Think <= 0 {
		return true
	}
	lo := float64(u.cfg.Think) * (1 - u.cfg.Jitter)
	d := time.Duration(lo + u.rng.Float64()*2*u.cfg.Jitter*float64(u.cfg.Think))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// measure runs one transaction under its own timeout (not the run's: a
// transaction in progress when the run ends is finished, not cut off) and
// records it.
func (u *user) measure(op Op, fn func(ctx context.Context) (Result, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), u.cfg.Timeout)
	defer cancel()
	start := time.Now()
	res, err := fn(ctx)
	end := time.Now()
	if start.Before(u.measureFrom) {
		if err != nil {
			u.failures++
			u.warmupErrors.Add(1)
			return err
		}
		u.failures = 0
		return nil
	}
	u.lastEnd = end
	if err != nil {
		u.failures++
		u.recs[op].fail(err)
		return err
	}
	u.failures = 0
	u.recs[op].ok(end.Sub(start), res.Server, res.Known)
	return nil
}

func (u *user) run(ctx context.Context) {
	for {
		if !u.think(ctx) {
			return
		}
		if u.cfg.Count > 0 && u.tickets.Load() >= int64(u.cfg.Count) {
			return
		}
		if err := u.measure(OpPatron, func(c context.Context) (Result, error) { return u.term.Patron(c, u.share) }); err != nil {
			continue
		}
		for _, bc := range u.share.Barcodes {
			if !u.think(ctx) || !u.take() {
				return
			}
			err := u.measure(OpCheckout, func(c context.Context) (Result, error) { return u.term.Checkout(c, u.share, bc) })
			u.out[bc] = err != nil
		}
		u.endVisit()
		for _, bc := range u.share.Barcodes {
			uncertain, isOut := u.out[bc]
			switch {
			case !isOut:
				continue
			case uncertain:
				// The check-out failed: put the item back unmeasured, whatever
				// state it is in, rather than count a second error for it.
				u.returnQuietly(bc)
				continue
			}
			if !u.think(ctx) || !u.take() {
				return
			}
			if u.measure(OpCheckin, func(c context.Context) (Result, error) { return u.term.Checkin(c, bc) }) == nil {
				delete(u.out, bc)
			} else {
				u.returnQuietly(bc)
			}
		}
		u.endVisit()
	}
}

func (u *user) endVisit() {
	ctx, cancel := context.WithTimeout(context.Background(), u.cfg.Timeout)
	defer cancel()
	u.term.EndVisit(ctx)
}

func (u *user) returnQuietly(bc string) {
	u.unmeasured.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), u.cfg.Timeout)
	defer cancel()
	u.term.Checkin(ctx, bc)
	delete(u.out, bc)
}

// cleanup returns, unmeasured, what the user still has out when the run ends.
func (u *user) cleanup() {
	if len(u.out) == 0 {
		return
	}
	u.endVisit()
	for _, bc := range u.share.Barcodes {
		if _, ok := u.out[bc]; ok {
			u.returnQuietly(bc)
		}
	}
	u.endVisit()
}
