package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// own is the throwaway cluster this test process started because Env was unset
// (a plain go test, without make test's scripts/pg.sh run): one for the whole
// process, started when the first test asks for a PostgreSQL database.
var own struct {
	once sync.Once
	mu   sync.Mutex
	url  string
	dir  string // the cluster's directory, deleted when it stops
	err  error
	// reaper is the process that stops and deletes the cluster when stdin, the
	// write end of its pipe held by this process, closes: when StopCluster
	// closes it, or when this process ends any other way (a panic, go test's
	// -timeout, a signal), since the kernel closes it then.
	reaper *exec.Cmd
	stdin  io.WriteCloser
}

// ownCluster starts this process's cluster the first time and returns its URL.
// It runs scripts/pg.sh start, the same cluster make test runs under (a Unix
// socket in a new temporary directory and no TCP port, run as the postgres user
// when this process is root), so there is one way to start one.
func ownCluster() (string, error) {
	own.once.Do(func() {
		start := time.Now()
		url, dir, reaper, stdin, err := startCluster()
		own.mu.Lock()
		defer own.mu.Unlock()
		own.url, own.dir, own.reaper, own.stdin, own.err = url, dir, reaper, stdin, err
		if err == nil {
			fmt.Fprintf(os.Stderr, "pgtest: %s is not set: started a throwaway PostgreSQL cluster in %s (%.1f s)\n",
				Env, dir, time.Since(start).Seconds())
		}
	})
	own.mu.Lock()
	defer own.mu.Unlock()
	if own.err == nil && own.url == "" {
		return "", fmt.Errorf("this test process's throwaway PostgreSQL cluster is stopped already (StopCluster)")
	}
	return own.url, own.err
}

func startCluster() (url, dir string, reaper *exec.Cmd, stdin io.WriteCloser, err error) {
	if !Selected(db.Postgres) {
		return "", "", nil, nil, fmt.Errorf("PostgreSQL is not selected for this run (%s=%s)", EnginesEnv, os.Getenv(EnginesEnv))
	}
	if !installed() {
		return "", "", nil, nil, fmt.Errorf("this test needs PostgreSQL and %s is not set, and PostgreSQL's initdb and pg_ctl are not installed "+
			"(no initdb in PG_BINDIR or /usr/lib/postgresql/*/bin): run make test-deps, which installs them; or %s", Env, howTo)
	}
	script, err := pgScript()
	if err != nil {
		return "", "", nil, nil, err
	}
	cmd := exec.Command("bash", script, "start")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", nil, nil, fmt.Errorf("%s is not set and starting a throwaway cluster failed: %s start: %v: %s", Env, script, err, stderr.Bytes())
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "export "+Env+"='"); ok {
			url = strings.TrimSuffix(v, "'")
		}
		if v, ok := strings.CutPrefix(line, "# stop it with: scripts/pg.sh stop "); ok {
			dir = strings.TrimSpace(v)
		}
	}
	if url == "" || dir == "" {
		return "", "", nil, nil, fmt.Errorf("%s start printed no URL and directory: %s", script, out)
	}
	// The reaper ignores the terminal's interrupt (its own process group, and
	// the trap) so that it outlives this process to stop the cluster.
	reaper = exec.Command("bash", "-c", `trap '' INT TERM HUP; cat >/dev/null; exec bash "$0" stop "$1"`, script, dir)
	reaper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if stdin, err = reaper.StdinPipe(); err == nil {
		err = reaper.Start()
	}
	if err != nil {
		_ = exec.Command("bash", script, "stop", dir).Run()
		return "", "", nil, nil, fmt.Errorf("start the process that stops the throwaway cluster: %v", err)
	}
	return url, dir, reaper, stdin, nil
}

// installed reports whether PostgreSQL's server programs are where
// scripts/pg.sh looks for them.
func installed() bool {
	if d := os.Getenv("PG_BINDIR"); d != "" {
		_, err := os.Stat(filepath.Join(d, "initdb"))
		return err == nil
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(m) > 0
}

// pgScript finds scripts/pg.sh in the module the test runs in (go test runs a
// package's tests in its directory).
func pgScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		script := filepath.Join(dir, "scripts", "pg.sh")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(script); err != nil {
				return "", fmt.Errorf("%s is not set and there is no %s to start a throwaway cluster with: %s", Env, script, howTo)
			}
			return script, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s is not set and no go.mod above the test's directory says where scripts/pg.sh is: %s", Env, howTo)
		}
		dir = parent
	}
}

// StopCluster stops and deletes the cluster this process started, if any, and
// waits until it is gone. Main calls it; a process that ends without it has
// its cluster stopped just after it ends.
func StopCluster() error {
	own.mu.Lock()
	reaper, stdin, url, dir := own.reaper, own.stdin, own.url, own.dir
	own.reaper, own.stdin, own.url = nil, nil, ""
	own.mu.Unlock()
	if reaper == nil {
		return nil
	}
	adminMu.Lock()
	if c := adminPools[url]; c != nil {
		c.Close()
		delete(adminPools, url)
	}
	delete(templates, url)
	adminMu.Unlock()
	if err := errors.Join(stdin.Close(), reaper.Wait()); err != nil {
		return fmt.Errorf("stop the throwaway cluster in %s: %w", dir, err)
	}
	return nil
}

// Main runs the tests of m, then drops the templates they built and stops the
// cluster the process started, and returns the exit code for os.Exit. A
// package whose tests use PostgreSQL without db/dbtest calls it from its
// TestMain (dbtest.Main does the same):
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if err := Cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		code = 1
	}
	return code
}

// Cleanup drops the templates this process built and stops the cluster it
// started: the end of Main, for a TestMain that does more after its tests.
func Cleanup() error {
	return errors.Join(DropTemplates(), StopCluster())
}
