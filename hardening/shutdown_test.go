package hardening

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/waittest"
)

// TestShutdownDrainsSlowRequest sends SIGTERM while requests are still arriving,
// their bodies trickling in: the server stops taking new connections at once, but
// finishes each request in progress (the sign-ins are answered and their sessions
// saved), then exits with status 0 having closed the database cleanly: the WAL is
// checkpointed into the file and the -wal file is gone or empty.
func TestShutdownDrainsSlowRequest(t *testing.T) {
	path := newDB(t)
	s := startServer(t, path)
	slow := scale(3, 20)
	trickle := scale(1500*time.Millisecond, 5*time.Second)

	body := url.Values{"username": {"desk"}, "password": {"desk"}}.Encode()
	type result struct {
		status string
		err    error
	}
	results := make([]result, slow)
	started := make(chan struct{}, slow)
	var finished atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < slow; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			conn, err := net.DialTimeout("tcp", s.Addr, 5*time.Second)
			if err != nil {
				results[i].err = err
				started <- struct{}{}
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(60 * time.Second))
			// Expect: 100-continue: the server answers "100 Continue" when the
			// handler starts reading the body, so the client knows the request
			// is in progress before SIGTERM comes.
			fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
				"Content-Length: %d\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n", s.Addr, len(body))
			r := bufio.NewReader(conn)
			line, err := r.ReadString('\n')
			if err == nil && strings.HasPrefix(line, "HTTP/1.1 100 ") {
				_, err = r.ReadString('\n') // the blank line that ends it
			} else if err == nil {
				err = fmt.Errorf("answered %q before the body, want 100 Continue", strings.TrimSpace(line))
			}
			if err != nil {
				results[i].err = err
				started <- struct{}{}
				return
			}
			started <- struct{}{}
			step := trickle / time.Duration(len(body))
			for j := 0; j < len(body); j++ {
				time.Sleep(step) // the slow client under test
				if _, err := conn.Write([]byte{body[j]}); err != nil {
					results[i].err = fmt.Errorf("writing the body: %w", err)
					return
				}
			}
			line, err = r.ReadString('\n')
			results[i] = result{strings.TrimSpace(line), err}
			finished.Add(1)
		}(i)
	}
	for i := 0; i < slow; i++ {
		<-started
	}
	sent := time.Now()
	if err := s.cmd.Process.Signal(sigterm); err != nil {
		t.Fatal(err)
	}

	// New connections are refused while the old requests finish: the listener
	// closes as the signal arrives, before any slow request is done.
	c := &http.Client{Timeout: time.Minute}
	waittest.For(t, "new connections to be refused after SIGTERM", func() bool {
		resp, err := c.Get(s.Base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return errors.Is(err, syscall.ECONNREFUSED)
	})
	if n := finished.Load(); n > 0 {
		t.Errorf("new connections were still served after %d of the %d slow requests had finished: the listener should close at SIGTERM", n, slow)
	}

	wg.Wait()
	for i, r := range results {
		if r.err != nil || r.status != "HTTP/1.1 303 See Other" {
			t.Errorf("slow sign-in %d: %q, %v; want it answered 303 after SIGTERM", i, r.status, r.err)
		}
	}
	if err := s.wait(t); err != nil {
		t.Fatalf("stacks serve after SIGTERM: %v, want exit status 0\n%s", err, s.out.String())
	}
	took := time.Since(sent)
	if took < trickle-500*time.Millisecond {
		t.Errorf("the server exited %v after SIGTERM, before the slow requests could finish", took)
	}
	if !walGone(t, path) {
		t.Error("the -wal file is left with content after a clean shutdown: the database was not closed cleanly")
	}
	// The sign-ins finished during the shutdown were saved.
	out, err := runStacks(t, "check", "--db", path)
	if err != nil {
		t.Fatalf("stacks check after shutdown: %v\n%s", err, out)
	}
	if n := countSessions(t, path); n < slow {
		t.Errorf("%d sessions saved, want the %d sign-ins answered during shutdown", n, slow)
	}
	t.Logf("%d slow sign-ins finished; exit %v after SIGTERM", slow, took.Round(time.Millisecond))
}
