package hardening

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestServerLimits checks the limits of stacks serve on the real binary: request
// headers of more than 64 KB are refused (431), a form of more than 1 MB is refused
// with a page that says so (413), and a request body sent slowly is still read,
// since the 2 s header timeout does not apply to it; only the 60 s read timeout
// does (checked under make soak, where the body trickles for longer than that).
func TestServerLimits(t *testing.T) {
	s := startServer(t, newDB(t), "--read-header-timeout", "2s")

	t.Run("ErrHeadersTooLarge", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, s.Base+"/login", nil)
		req.Header.Set("X-Big", strings.Repeat("x", 100<<10))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("100 KB of headers: %s, want 431", resp.Status)
		}
	})

	t.Run("ErrFormTooLarge", func(t *testing.T) {
		form := url.Values{"username": {"desk"}, "password": {strings.Repeat("x", 2<<20)}}
		resp, err := http.Post(s.Base+"/login", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "more than 1 MB") {
			t.Fatalf("a 2 MB form: %s, want 413 with a page saying why", resp.Status)
		}
	})

	t.Run("SlowBody", func(t *testing.T) {
		trickle := scale(4*time.Second, 75*time.Second)
		body := url.Values{"username": {"desk"}, "password": {"desk"}}.Encode()
		conn, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n", s.Addr, len(body))
		start := time.Now()
		step := trickle / time.Duration(len(body))
		var writeErr error
		for i := 0; i < len(body) && writeErr == nil; i++ {
			time.Sleep(step) // the slow client under test
			_, writeErr = conn.Write([]byte{body[i]})
		}
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		took := time.Since(start)
		if !soak() {
			if err != nil || !strings.HasPrefix(line, "HTTP/1.1 303") {
				t.Fatalf("a body sent over %v: %q, %v; want it read and answered", trickle, line, err)
			}
			return
		}
		// Under make soak the body takes longer than the 60 s read timeout: the
		// server gives up on it.
		if strings.HasPrefix(line, "HTTP/1.1 303") {
			t.Fatalf("a body sent over %v was still read: the read timeout did not apply", trickle)
		}
		if took > 70*time.Second {
			t.Errorf("the server cut the slow body off after %v, want about 60 s", took)
		}
	})
}
