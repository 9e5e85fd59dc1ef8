package hardening

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/deskclient"
	"github.com/stacks-ils/stacks/stackstest"
)

const (
	// startTimeout bounds how long a server may take to answer /healthz on a
	// slow, shared machine.
	startTimeout = 60 * time.Second
	// stopTimeout is how long a server gets to exit after SIGTERM.
	stopTimeout = 20 * time.Second
)

var (
	// stacksBin is the binary under test, built once by TestMain.
	stacksBin string
	// templateDB is a small demo library that each test copies.
	templateDB string
)

// soak reports whether the long versions run (make soak).
func soak() bool { return os.Getenv("STACKS_SOAK") != "" }

// scale returns n, or soakN under make soak.
func scale[T any](n, soakN T) T {
	if soak() {
		return soakN
	}
	return n
}

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "stacks-hardening-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hardening:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	defer func() {
		if err := pgtest.Cleanup(); err != nil {
			fmt.Fprintln(os.Stderr, "hardening:", err)
		}
	}()
	if stacksBin, srcRoot, err = stackstest.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "hardening:", err)
		return 1
	}
	templateDB = filepath.Join(dir, "demo.db")
	out, err := exec.Command(stacksBin, "demo", "--db", templateDB, "--titles", "300", "--patrons", "100").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hardening: stacks demo: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// srcRoot is the module's directory, which TestMain built stacksBin from.
var srcRoot string

// newDB copies the demo library into the test's directory and returns its path.
func newDB(t testing.TB) string {
	t.Helper()
	// go test reruns the package when the binary's sources change only if a
	// test opens them (TestMain's reads are not recorded).
	stackstest.Record(t, srcRoot)
	b, err := os.ReadFile(templateDB)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "library.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// server is a running stacks serve process.
type server struct {
	Base string // http://127.0.0.1:PORT
	Addr string // 127.0.0.1:PORT
	DB   string

	cmd     *exec.Cmd
	out     *stackstest.Buffer
	exited  chan struct{}
	waitErr error
}

// startServer starts stacks serve on the database at path, on a free loopback
// port, and waits until it answers /healthz. It is killed when the test ends if it
// is still running.
func startServer(t testing.TB, path string, extraArgs ...string) *server {
	t.Helper()
	// go test reruns the package when the binary's sources change only if a
	// test opens them (TestMain's reads are not recorded).
	stackstest.Record(t, srcRoot)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		args := append([]string{"serve", "--db", path, "--addr", addr, "--log-level", "warn"}, extraArgs...)
		s := &server{Base: "http://" + addr, Addr: addr, DB: path, out: &stackstest.Buffer{}, exited: make(chan struct{})}
		s.cmd = exec.Command(stacksBin, args...)
		s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
		s.cmd.SysProcAttr = childProcAttr()
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			s.waitErr = s.cmd.Wait()
			close(s.exited)
		}()
		if err := stackstest.WaitHealthy(s.Base+"/healthz", startTimeout, s.exited); err != nil {
			s.kill()
			lastErr = fmt.Errorf("stacks %s: %w\n--- output ---\n%s", strings.Join(args, " "), err, s.out.String())
			if strings.Contains(s.out.String(), "address already in use") {
				continue
			}
			break
		}
		t.Cleanup(func() {
			s.kill()
			if t.Failed() {
				t.Logf("--- stacks serve output ---\n%s", s.out.String())
			}
		})
		return s
	}
	t.Fatal(lastErr)
	return nil
}

// kill stops the process at once (SIGKILL) and waits for it, if it still runs.
func (s *server) kill() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// terminate sends SIGTERM and waits for the process to exit, returning its exit
// error (nil for status 0).
func (s *server) terminate(t testing.TB) error {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	return s.wait(t)
}

// wait waits for the process to exit, for at most stopTimeout.
func (s *server) wait(t testing.TB) error {
	t.Helper()
	select {
	case <-s.exited:
		return s.waitErr
	case <-time.After(stopTimeout):
		s.kill()
		t.Fatalf("stacks did not exit within %v\n%s", stopTimeout, s.out.String())
		return nil
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// runStacks runs a stacks command to completion, with a time limit, and returns
// its output.
func runStacks(t testing.TB, args ...string) (string, error) {
	t.Helper()
	// go test reruns the package when the binary's sources change only if a
	// test opens them (TestMain's reads are not recorded).
	stackstest.Record(t, srcRoot)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, stacksBin, args...).CombinedOutput()
	return string(out), err
}

// walGone reports whether the database's -wal file is gone or empty: what a clean
// close (the last connection checkpoints the log into the file) leaves.
func walGone(t testing.TB, path string) bool {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if errors.Is(err, os.ErrNotExist) {
		return true
	} else if err != nil {
		t.Fatal(err)
	}
	return fi.Size() == 0
}

// desk is one desk's browser: a deskclient (a cookie jar, redirects not followed)
// on which the tests post forms themselves, to see each answer's status.
type desk struct {
	base string
	dc   *deskclient.Client
	http *http.Client
}

func newDesk(base string) *desk {
	dc := deskclient.New(base)
	return &desk{base: base, dc: dc, http: dc.HTTP}
}

// post sends a same-origin form post, as a browser does, and returns the status
// and Location of the answer.
func (d *desk) post(path string, form url.Values) (int, string, error) {
	status, location, _, err := d.send(path, form)
	return status, location, err
}

// postPage posts a same-origin form and returns the answer's status and body.
func (d *desk) postPage(path string, form url.Values) (int, string, error) {
	status, _, body, err := d.send(path, form)
	return status, body, err
}

// send posts a same-origin form, as a browser does, and returns the answer's
// status, Location and body.
func (d *desk) send(path string, form url.Values) (status int, location, body string, err error) {
	req, err := http.NewRequest(http.MethodPost, d.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", d.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := d.http.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", "", err
	}
	return resp.StatusCode, resp.Header.Get("Location"), string(b), nil
}

// get loads a page and returns its status and body.
func (d *desk) get(path string) (int, string, error) {
	resp, err := d.http.Get(d.base + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// login signs in as user (whose password is the same, as in the demo library).
func (d *desk) login(t testing.TB, user string) {
	t.Helper()
	if _, err := d.dc.Login(context.Background(), user, user); err != nil {
		t.Fatalf("login as %s: %v", user, err)
	}
}

// sigterm is what docker stop and systemd send.
var sigterm = syscall.SIGTERM

// openDB opens the database file the server used, after it stopped (or beside it:
// SQLite in WAL mode shares a file between processes).
func openDB(t testing.TB, path string) *db.DB {
	t.Helper()
	d, err := db.Open(path, db.Options{ReadConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// queryInt runs a query that returns one integer.
func queryInt(t testing.TB, d *db.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := d.Read(context.Background(), func(tx *db.Tx) error { return tx.QueryRow(query, args...).Scan(&n) }); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// countSessions counts the sessions saved in the database.
func countSessions(t testing.TB, path string) int {
	t.Helper()
	d := openDB(t, path)
	defer d.Close()
	return queryInt(t, d, `SELECT count(*) FROM sessions`)
}
