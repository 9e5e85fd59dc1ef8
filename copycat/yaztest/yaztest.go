// Package yaztest hands tests a real Z39.50 and SRU server: yaz-ztest, the test
// server of Debian's yaz package, started by the test process on a free
// loopback port the first time a test asks for it (Start), and stopped by
// Cleanup (call it from TestMain after m.Run); or one per test (New). yaz-ztest answers every search with made-up
// hits and serves the same few sample MARC records, in USMARC over Z39.50 and in
// MARCXML over SRU, from its database "Default".
//
// Where yaz-ztest is not installed the test fails and says how to install it;
// it never skips.
package yaztest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/stackstest"
	"github.com/stacks-ils/stacks/waittest"
)

// Binary is where Debian's yaz package installs the test server.
const Binary = "/usr/bin/yaz-ztest"

// Database is the database yaz-ztest serves.
const Database = "Default"

// Server is a running yaz-ztest.
type Server struct {
	// Addr is its host:port on 127.0.0.1.
	Addr string
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
}

// Z3950 is the server's Z39.50 target address, host:port/database.
func (s *Server) Z3950() string { return s.Addr + "/" + Database }

// SRU is the server's SRU base URL.
func (s *Server) SRU() string { return "http://" + s.Addr + "/" + Database }

var shared struct {
	mu  sync.Mutex
	srv *Server
	err error
}

// Start returns the process's yaz-ztest, starting it on first use.
func Start(tb testing.TB) *Server {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = start()
	}
	if shared.err != nil {
		tb.Fatalf("yaztest: %v", shared.err)
	}
	return shared.srv
}

// New starts a yaz-ztest of tb's own, stopped when tb ends: for test packages
// whose TestMain does not call Cleanup.
func New(tb testing.TB) *Server {
	tb.Helper()
	s, err := start()
	if err != nil {
		tb.Fatalf("yaztest: %v", err)
	}
	tb.Cleanup(func() { s.stop() })
	return s
}

func (s *Server) stop() error {
	s.cmd.Process.Kill()
	<-s.done
	return os.RemoveAll(s.dir)
}

// Cleanup stops the yaz-ztest Start started, if any.
func Cleanup() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	s := shared.srv
	shared.srv, shared.err = nil, nil
	if s == nil {
		return nil
	}
	return s.stop()
}

func start() (*Server, error) { return startBinary(Binary) }

func startBinary(path string) (*Server, error) {
	bin, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not installed; the copy cataloguing tests search a real Z39.50/SRU server: run `apt-get install yaz` (scripts/test-deps.sh does)", path)
	}
	dir, err := os.MkdirTemp("", "yaztest-")
	if err != nil {
		return nil, err
	}
	// A free port can be taken between choosing it and yaz-ztest binding it:
	// try a few.
	var lastErr error
	for range 5 {
		port, err := stackstest.FreePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s, err := launch(bin, dir, port)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func launch(bin, dir string, port int) (*Server, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logFile := filepath.Join(dir, "ztest.log")
	cmd := exec.Command(bin, "-l", logFile, "tcp:"+addr)
	cmd.Dir = dir
	// The server dies with the test process even if Cleanup never runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &Server{Addr: addr, cmd: cmd, dir: dir, done: make(chan struct{})}
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(s.done)
	}()
	// Wait until it accepts connections, or exits (the port was taken).
	var exited bool
	var dialErr error
	accepting := waittest.Eventually(func() bool {
		select {
		case <-s.done:
			exited = true
			return true
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			dialErr = err
			return false
		}
		c.Close()
		return true
	})
	switch {
	case exited:
		log, _ := os.ReadFile(logFile)
		return nil, fmt.Errorf("%s exited before accepting connections on %s (%v): %s", bin, addr, waitErr, tail(log))
	case !accepting:
		cmd.Process.Kill()
		<-s.done
		return nil, errors.Join(fmt.Errorf("%s did not accept connections on %s within %v", bin, addr, waittest.Limit), dialErr)
	}
	return s, nil
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
