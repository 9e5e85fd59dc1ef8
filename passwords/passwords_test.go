package passwords_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/waittest"
)

func mustHash(tb testing.TB, pw string) string {
	tb.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		tb.Fatal(err)
	}
	return string(h)
}

// TestPool: a burst larger than the pool and its queue is refused at once with
// ErrBusy, never compared, and never more than the pool's size run together.
func TestPool(t *testing.T) {
	hash := mustHash(t, "secret")
	t.Run("OK", func(t *testing.T) {
		p := passwords.NewPool(1, 0, time.Second)
		if ok, err := p.Compare(context.Background(), hash, "secret"); !ok || err != nil {
			t.Errorf("right password: %v %v", ok, err)
		}
		if ok, err := p.Compare(context.Background(), hash, "wrong"); ok || err != nil {
			t.Errorf("wrong password: %v %v", ok, err)
		}
		if p.Comparisons() != 2 {
			t.Errorf("%d comparisons, want 2", p.Comparisons())
		}
	})
	t.Run("ErrBusy", func(t *testing.T) {
		// A hash of cost 7 keeps the one slot busy while the burst arrives.
		slow, err := bcrypt.GenerateFromPassword([]byte("secret"), 7)
		if err != nil {
			t.Fatal(err)
		}
		const size, waiting, burst = 1, 2, 50
		p := passwords.NewPool(size, waiting, 5*time.Second)
		var wg sync.WaitGroup
		var mu sync.Mutex
		busy := 0
		start := make(chan struct{})
		for range burst {
			wg.Go(func() {
				<-start
				_, err := p.Compare(context.Background(), string(slow), "guess")
				if errors.Is(err, passwords.ErrBusy) {
					mu.Lock()
					busy++
					mu.Unlock()
				} else if err != nil {
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if got := p.Comparisons(); got > size+waiting || got < 1 {
			t.Errorf("%d of %d compared, want 1 to %d", got, burst, size+waiting)
		}
		if int64(busy) != burst-p.Comparisons() || p.Refused() != int64(busy) {
			t.Errorf("%d refused (%d counted), %d compared, of %d", busy, p.Refused(), p.Comparisons(), burst)
		}
	})
	t.Run("ErrBusyAfterWait", func(t *testing.T) {
		// A comparison at cost 11 (a tenth of a second or more, seconds under the
		// race detector) holds the only slot far longer than the 10 ms wait. The
		// hash is made once and written here: making it costs as much as the
		// comparison.
		p := passwords.NewPool(1, 1, 10*time.Millisecond)
		const slow = "$2a$11$vHp/haP95M.N3e6j1n.4NeucbnqQorSRic4j4IC.d1qy6wPwacwAa" // "secret"
		done := make(chan struct{})
		go func() { p.Compare(context.Background(), slow, "x"); close(done) }()
		waittest.For(t, "the slow comparison to start", func() bool { return p.Comparisons() > 0 })
		if _, err := p.Compare(context.Background(), hash, "secret"); !errors.Is(err, passwords.ErrBusy) {
			t.Errorf("no slot within the wait: %v, want ErrBusy", err)
		}
		<-done
	})
	t.Run("WithWait", func(t *testing.T) {
		// The same pool, whose own wait (10 ms) is far shorter than the slow
		// comparison: an attempt that may wait longer (a SIP terminal) gets the
		// slot when it comes free, and is compared.
		p := passwords.NewPool(1, 1, 10*time.Millisecond)
		const slow = "$2a$11$vHp/haP95M.N3e6j1n.4NeucbnqQorSRic4j4IC.d1qy6wPwacwAa" // "secret"
		done := make(chan struct{})
		go func() { p.Compare(context.Background(), slow, "x"); close(done) }()
		waittest.For(t, "the slow comparison to start", func() bool { return p.Comparisons() > 0 })
		ctx := passwords.WithWait(context.Background(), time.Minute)
		if ok, err := p.Compare(ctx, hash, "secret"); !ok || err != nil {
			t.Errorf("waited for the slot: %v %v, want a match", ok, err)
		}
		if p.Comparisons() != 2 || p.Refused() != 0 {
			t.Errorf("%d compared, %d refused; want 2 and 0", p.Comparisons(), p.Refused())
		}
		<-done
	})
}

// TestGate: one attempt per key in flight, MaxWaiting more wait their turn, the
// rest are refused at once; an attempt enters under all its keys or none.
func TestGate(t *testing.T) {
	ctx := context.Background()
	var g passwords.Gate
	acct := passwords.Key{Name: "user:desk", Max: 1, MaxWaiting: 1}
	addr := passwords.Key{Name: "addr:1", Max: 2, MaxWaiting: 0}

	leave1, ok := g.Enter(ctx, 0, acct, addr)
	if !ok {
		t.Fatal("the first attempt was refused")
	}
	if _, ok := g.Enter(ctx, 0, acct, addr); ok {
		t.Fatal("a second attempt for the account entered while the first is in flight")
	}
	// Another account from the address: the address has room for two.
	other := passwords.Key{Name: "user:admin", Max: 1}
	leave2, ok := g.Enter(ctx, 0, other, addr)
	if !ok {
		t.Fatal("another account from the address was refused")
	}
	// The address is full now (two in flight, none may wait): refused at once,
	// and the account key it named is not taken.
	if _, ok := g.Enter(ctx, time.Second, passwords.Key{Name: "user:x", Max: 1}, addr); ok {
		t.Fatal("a third attempt from the address entered")
	}
	leave2()
	leave2() // twice is once

	// One may wait for the account; the next is refused at once.
	entered := make(chan func())
	go func() {
		leave, ok := g.Enter(ctx, time.Minute, acct, addr)
		if !ok {
			t.Error("the waiting attempt was refused")
		}
		entered <- leave
	}()
	waittest.For(t, "the second attempt to wait", func() bool { return passwords.GateWaiting(&g, acct.Name) == 1 })
	// Refused at once, not after its wait (a minute: far longer than a busy
	// machine takes to refuse it).
	start := time.Now()
	if _, ok := g.Enter(ctx, time.Minute, acct, addr); ok {
		t.Fatal("a third attempt for the account entered")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("a third attempt for the account waited %v; want it refused at once", d)
	}
	leave1()
	leave := <-entered
	leave()
	if leave, ok := g.Enter(ctx, 0, acct, addr); !ok {
		t.Fatal("refused after every attempt left")
	} else {
		leave()
	}
}
