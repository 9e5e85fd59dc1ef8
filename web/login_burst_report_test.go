package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/waittest"
)

// TestDeskLatencyDuringLoginBurst is a report, not a check (a burst of guesses
// once stalled a checkout for 22 s). It times the desk's checkouts
// for a few seconds with nothing else going on, then while a burst of 500 parallel
// sign-in guesses arrives every second, and logs p50 and p99 of each side by side, with
// passwords at bcrypt's real cost. Two bursts: guesses for one account from one
// address (the finding), and each guess for its own name from its own address
// (127.0.x.y), which no per-account or per-address limit stops and only the
// comparison pool bounds. Run it with
//
//	STACKS_REPORT=1 go test -count=1 -run TestDeskLatencyDuringLoginBurst -v ./web
//
// (not under -race, which makes bcrypt many times slower). The figures are in
// docs/security.md (Hardening II).
func TestDeskLatencyDuringLoginBurst(t *testing.T) {
	if os.Getenv("STACKS_REPORT") == "" {
		t.Skip("a report: set STACKS_REPORT=1")
	}
	defer func(c int) { passwords.BcryptCost = c }(passwords.BcryptCost)
	passwords.BcryptCost = bcrypt.DefaultCost

	e, desk, barcodes := benchEnv(t, "FULL")
	h, err := bcrypt.GenerateFromPassword([]byte("admin"), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	err = e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE staff_users SET password_hash = ? WHERE username = 'admin'`, string(h))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	deskPost(t, desk, e.Srv.URL+"/checkout/patron", url.Values{"card": {"P0001"}})

	const measure = 5 * time.Second
	idle := deskCheckouts(t, e, desk, barcodes, measure)
	t.Logf("GOMAXPROCS %d, comparison pool %d", runtime.GOMAXPROCS(0), passwords.DefaultSize())
	t.Logf("%-44s %6s %9s %9s %9s", "checkout", "n", "p50", "p99", "max")
	t.Logf("%-44s %s", "idle", summary(idle))

	for _, sc := range []struct {
		name  string
		guess func(wave, i int) (user string, from net.IP)
	}{
		{"burst: one account, one address", func(wave, i int) (string, net.IP) {
			return "admin", net.IPv4(127, 0, 0, 1)
		}},
		{"burst: a name and an address per guess", func(wave, i int) (string, net.IP) {
			n := wave*500 + i
			return fmt.Sprint("guess", n), net.IPv4(127, 1, byte(n/250), byte(1+n%250))
		}},
	} {
		base, refusedBase := passwords.Comparisons(), passwords.Default.Refused()
		var sent atomic.Int64
		stop := make(chan struct{})
		done := make(chan struct{})
		statuses := map[int]int{}
		var mu sync.Mutex
		go func() {
			defer close(done)
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for wave := 0; ; wave++ {
				var wg sync.WaitGroup
				for i := range 500 {
					user, from := sc.guess(wave, i)
					wg.Go(func() {
						sent.Add(1)
						s := guessFrom(e, from, user)
						mu.Lock()
						statuses[s]++
						mu.Unlock()
					})
				}
				wg.Wait()
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
		waittest.For(t, "the first guess compared", func() bool { return passwords.Comparisons() > base })
		during := deskCheckouts(t, e, desk, barcodes, measure)
		close(stop)
		<-done
		t.Logf("%-44s %s", sc.name, summary(during))
		t.Logf("    %d guesses sent, %d compared, %d refused by the pool; statuses %v",
			sent.Load(), passwords.Comparisons()-base, passwords.Default.Refused()-refusedBase, statuses)
		idle = deskCheckouts(t, e, desk, barcodes, measure)
		t.Logf("%-44s %s", "idle again", summary(idle))
	}
}

// guessFrom sends one sign-in guess for user from the local address from, on a
// connection of its own, and returns the status (0 on a transport error).
func guessFrom(e *testEnv, from net.IP, user string) int {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: from}}
	c := &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       60 * time.Second,
	}
	resp, err := c.Do(e.formRequest("/login", url.Values{"username": {user}, "password": {"guess"}}))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func deskPost(t *testing.T, c *http.Client, u string, form url.Values) {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST %s %v: %d", u, form, resp.StatusCode)
	}
}

// deskCheckouts checks items out and in again for d, and returns how long each
// checkout took, end to end.
func deskCheckouts(t *testing.T, e *testEnv, c *http.Client, barcodes []string, d time.Duration) []time.Duration {
	var took []time.Duration
	for i, end := 0, time.Now().Add(d); time.Now().Before(end) || len(took) < 5; i++ {
		bc := barcodes[i%len(barcodes)]
		start := time.Now()
		deskPost(t, c, e.Srv.URL+"/checkout", url.Values{"barcode": {bc}})
		took = append(took, time.Since(start))
		deskPost(t, c, e.Srv.URL+"/checkin", url.Values{"barcode": {bc}})
	}
	return took
}

func summary(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	return fmt.Sprintf("%6d %9s %9s %9s", len(s), ms(q(0.50)), ms(q(0.99)), ms(s[len(s)-1]))
}
