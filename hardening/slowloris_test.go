package hardening

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// raiseFileLimit lifts this process's open-file limit to the hard limit, so that it
// (and the server it starts, which inherits it) can hold the connections.
func raiseFileLimit(t *testing.T, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	if lim.Cur < need {
		t.Fatalf("the open-file limit is %d, and this test needs %d: raise the hard limit (ulimit -Hn)", lim.Cur, need)
	}
}

// TestSlowloris holds hundreds of connections that send their request headers one
// byte a second, as the slowloris attack does, against a server started with
// --read-header-timeout 2s. The server closes each of them about 2 s after it
// opened, while a signed-in desk keeps getting /healthz and the Check out page
// quickly all along. Under make soak the attack is larger and lasts a minute, each
// closed connection opening a new one at once.
func TestSlowloris(t *testing.T) {
	const headerTimeout = 2 * time.Second
	attackers := scale(300, 1000)
	duration := scale(4*time.Second, 60*time.Second)
	raiseFileLimit(t, uint64(2*attackers+200))

	s := startServer(t, newDB(t), "--read-header-timeout", headerTimeout.String())
	d := newDesk(s.Base)
	d.login(t, "desk")

	type closed struct {
		after time.Duration // from dial to the server's close
		err   error
	}
	var mu sync.Mutex
	var closes []closed
	stop := make(chan struct{})
	var wg sync.WaitGroup
	attack := func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			conn, err := net.DialTimeout("tcp", s.Addr, 10*time.Second)
			if err != nil {
				mu.Lock()
				closes = append(closes, closed{err: fmt.Errorf("dial: %w", err)})
				mu.Unlock()
				return
			}
			// One byte a second of a header that never ends.
			done := make(chan struct{})
			go func() {
				req := "GET / HTTP/1.1\r\nHost: " + s.Addr + "\r\nX-Slow: " + strings.Repeat("a", 120)
				if _, err := io.WriteString(conn, req[:20]); err != nil {
					return
				}
				for i := 20; i < len(req); i++ {
					select {
					case <-done:
						return
					case <-time.After(time.Second):
					}
					if _, err := conn.Write([]byte{req[i]}); err != nil {
						return
					}
				}
			}()
			conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, err = conn.Read(make([]byte, 512))
			after := time.Since(start)
			close(done)
			conn.Close()
			if err == io.EOF || isReset(err) {
				err = nil
			} else if err == nil {
				err = fmt.Errorf("the server answered instead of closing")
			}
			mu.Lock()
			closes = append(closes, closed{after: after, err: err})
			mu.Unlock()
			if !soak() {
				return
			}
		}
	}
	for i := 0; i < attackers; i++ {
		wg.Add(1)
		go attack()
	}

	// A desk at work meanwhile: the health check and a signed-in page.
	var lat []time.Duration
	var failures []string
	deadline := time.Now().Add(duration)
	for time.Now().Before(deadline) {
		for _, path := range []string{"/healthz", "/checkout"} {
			start := time.Now()
			status, body, err := d.get(path)
			lat = append(lat, time.Since(start))
			if err != nil || status != http.StatusOK || (path == "/checkout" && !strings.Contains(body, "Card number")) {
				failures = append(failures, fmt.Sprintf("%s: %d %v", path, status, err))
			}
		}
		time.Sleep(100 * time.Millisecond) // a desk's pace
	}
	close(stop)
	wg.Wait()

	for _, f := range failures {
		t.Errorf("desk request during the attack: %s", f)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	median, worst := lat[len(lat)/2], lat[len(lat)-1]
	p99 := lat[len(lat)*99/100]
	// Bounds generous enough for a loaded two-core machine.
	if median > 2500*time.Millisecond || p99 > 20*time.Second {
		t.Errorf("desk latency during the attack: median %v, p99 %v, worst %v", median, p99, worst)
	}

	if len(closes) < attackers {
		t.Fatalf("only %d of %d slow connections ended", len(closes), attackers)
	}
	var afters []time.Duration
	for _, c := range closes {
		if c.err != nil {
			t.Errorf("slow connection: %v", c.err)
			continue
		}
		afters = append(afters, c.after)
	}
	sort.Slice(afters, func(i, j int) bool { return afters[i] < afters[j] })
	first, last := afters[0], afters[len(afters)-1]
	// Closed on time: not before the timeout, and before the default of 10 s or
	// never, allowing a busy machine three times the timeout to close them all.
	if first < headerTimeout-100*time.Millisecond || last > 4*headerTimeout {
		t.Errorf("slow connections closed after %v to %v, want about %v", first, last, headerTimeout)
	}
	t.Logf("%d slow-header connections closed %v to %v after opening (median %v); desk: %d requests, median %v, p99 %v, worst %v",
		len(afters), first.Round(time.Millisecond), last.Round(time.Millisecond), afters[len(afters)/2].Round(time.Millisecond),
		len(lat), median.Round(time.Microsecond), p99.Round(time.Microsecond), worst.Round(time.Microsecond))
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}
