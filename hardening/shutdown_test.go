package hardening

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
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
			fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
				"Content-Length: %d\r\nConnection: close\r\n\r\n", s.Addr, len(body))
			// The headers and the first byte of the body are in: the request is in
			// progress when SIGTERM comes.
			conn.Write([]byte(body[:1]))
			started <- struct{}{}
			rest := body[1:]
			step := trickle / time.Duration(len(rest))
			for j := 0; j < len(rest); j++ {
				time.Sleep(step)
				if _, err := conn.Write([]byte{rest[j]}); err != nil {
					results[i].err = fmt.Errorf("writing the body: %w", err)
					return
				}
			}
			line, err := bufio.NewReader(conn).ReadString('\n')
			results[i] = result{strings.TrimSpace(line), err}
		}(i)
	}
	for i := 0; i < slow; i++ {
		<-started
	}
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	if err := s.cmd.Process.Signal(sigterm); err != nil {
		t.Fatal(err)
	}

	// New connections are refused while the old requests finish.
	time.Sleep(300 * time.Millisecond)
	c := &http.Client{Timeout: 2 * time.Second}
	if resp, err := c.Get(s.Base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("a new request after SIGTERM was served (%s); the listener should be closed", resp.Status)
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
