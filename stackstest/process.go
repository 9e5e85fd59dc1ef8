package stackstest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// WaitHealthy polls url (a server's /healthz) until it answers 200, and
// returns an error saying what it last got if exited is closed first (the
// server's process ended) or timeout passes.
func WaitHealthy(url string, timeout time.Duration, exited <-chan struct{}) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("exited before answering %s (last: %s)", url, last)
		default:
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-exited:
		case <-time.After(100 * time.Millisecond): // the poll's interval
		}
	}
	return fmt.Errorf("%s not 200 after %v (last: %s)", url, timeout, last)
}

// Buffer collects a process's output (or a server's log) while the test reads
// it: a bytes.Buffer safe for both at once.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. Another
// process can take it before the caller binds it: a caller that starts a server
// on it tries again with another port when the server cannot bind.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
