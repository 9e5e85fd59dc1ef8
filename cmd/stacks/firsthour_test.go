package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/stackstest"
	"github.com/stacks-ils/stacks/staff"
	"github.com/stacks-ils/stacks/waittest"
)

// TestNeedsExistingLibrary: a command that works on a library refuses a --db
// that names no file, or no --db at all where there is no ./stacks.db, as
// stacks check does: it says how to make one (stacks init) or name one (--db),
// and creates nothing. Before, SQLite created an empty stacks.db and the
// command then failed on what the empty library lacked ("no branch CEN").
func TestNeedsExistingLibrary(t *testing.T) {
	passwords.BcryptCost = bcrypt.MinCost
	t.Setenv("STACKS_PASSWORD", "never-read-1")
	dir := t.TempDir()
	csv := filepath.Join(dir, "patrons.csv")
	marc := filepath.Join(dir, "records.mrc")
	for _, f := range []string{csv, marc} {
		if err := os.WriteFile(f, []byte("card,surname\nP1,Reader\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Each command, and its arguments after --db.
	commands := []struct{ cmd, args []string }{
		{[]string{"user", "add"}, []string{"--username", "clerk", "--name", "A Clerk", "--branch", "CEN"}},
		{[]string{"patrons", "import"}, []string{csv}},
		{[]string{"import"}, []string{marc}},
		{[]string{"export"}, nil},
		{[]string{"sip-account", "add"}, []string{"--username", "kiosk2", "--institution", "CEN", "--branch", "CEN"}},
		{[]string{"sip-account", "list"}, nil},
		{[]string{"notices", "run"}, nil},
		{[]string{"daily"}, nil},
		{[]string{"privacy", "run"}, nil},
		{[]string{"privacy", "export"}, []string{"--card", "P1"}},
		{[]string{"check"}, nil},
		{[]string{"serve"}, []string{"--addr", "127.0.0.1:0"}},
		{[]string{"fcgi"}, []string{"--listen", "127.0.0.1:0"}},
	}
	refused := func(t *testing.T, args []string, missing string) {
		t.Helper()
		var out bytes.Buffer
		err := run(context.Background(), args, &out, &out)
		if err == nil || !strings.Contains(err.Error(), missing+" does not exist") || !strings.Contains(err.Error(), "stacks init") || !strings.Contains(err.Error(), "--db") {
			t.Errorf("stacks %s: %v, want a refusal saying %s does not exist, with stacks init and --db\n%s", strings.Join(args, " "), err, missing, out.String())
		}
		if exitCode(err) != 2 {
			t.Errorf("stacks %s: exit status %d, want 2 (a command-line mistake)", strings.Join(args, " "), exitCode(err))
		}
	}
	t.Run("NamedPath", func(t *testing.T) {
		missing := filepath.Join(dir, "typo.db")
		for _, c := range commands {
			refused(t, slices.Concat(c.cmd, []string{"--db", missing}, c.args), missing)
			if _, err := os.Stat(missing); err == nil {
				t.Fatalf("stacks %s --db %s created the file", strings.Join(c.cmd, " "), missing)
			}
		}
	})
	t.Run("NoDB", func(t *testing.T) {
		t.Setenv("STACKS_DB", "")
		cwd := t.TempDir()
		t.Chdir(cwd)
		for _, c := range commands {
			refused(t, slices.Concat(c.cmd, c.args), "stacks.db")
			if entries, _ := os.ReadDir(cwd); len(entries) > 0 {
				t.Fatalf("stacks %s without --db left %s in the working directory", strings.Join(c.cmd, " "), entries[0].Name())
			}
		}
	})
}

// TestNeedsLibrarySetUp: on a database that has the schema but no branch
// (stacks migrate made it, or a new PostgreSQL database), the commands that
// add to a library say to run stacks init instead of failing on a branch
// nobody named.
func TestNeedsLibrarySetUp(t *testing.T) {
	passwords.BcryptCost = bcrypt.MinCost
	t.Setenv("STACKS_PASSWORD", "never-read-2")
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.db")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"migrate", "--db", path}, &out, &out); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out.String())
	}
	csv := filepath.Join(dir, "patrons.csv")
	if err := os.WriteFile(csv, []byte("card,surname,category,branch\nP1,Reader,ADULT,CEN\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	marc := filepath.Join("..", "..", "catalog", "marc", "testdata", "sandburg-1.xml")
	for _, args := range [][]string{
		{"user", "add", "--db", path, "--username", "clerk", "--name", "A Clerk", "--branch", "CEN"},
		{"patrons", "import", "--db", path, csv},
		{"import", "--db", path, marc},
	} {
		out.Reset()
		err := run(context.Background(), args, &out, &out)
		if err == nil || !strings.Contains(err.Error(), "not set up") || !strings.Contains(err.Error(), "stacks init --db "+path) {
			t.Errorf("stacks %s on a library with no branch: %v, want it to say the library is not set up and to run stacks init\n%s", strings.Join(args, " "), err, out.String())
		}
	}
}

// TestImportDefaultBranch: stacks import without --branch places the copies
// the records do not place at the library's first branch (the one stacks init
// made), not at a branch CEN the library may not have.
func TestImportDefaultBranch(t *testing.T) {
	passwords.BcryptCost = bcrypt.MinCost
	t.Setenv("STACKS_PASSWORD", "first-admin-pass")
	path := filepath.Join(t.TempDir(), "lib.db")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"init", "--db", path, "--branch", "mai", "--branch-name", "Main Library"}, &out, &out); err != nil {
		t.Fatalf("init: %v\n%s", err, out.String())
	}
	out.Reset()
	marc := filepath.Join("..", "..", "catalog", "marc", "testdata", "sandburg-1.xml")
	if err := run(context.Background(), []string{"import", "--db", path, "--quiet", marc}, &out, &out); err != nil || !strings.Contains(out.String(), "1 created") || !strings.Contains(out.String(), "1 copies created") {
		t.Fatalf("import without --branch into a library whose only branch is MAI: %v\n%s", err, out.String())
	}
}

// TestServeEmptyLibrary: stacks serve on a library nobody can sign in to yet
// says so, and what to run: in its log at start and on the staff sign-in page.
func TestServeEmptyLibrary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"migrate", "--db", path}, &out, &out); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	var logs stackstest.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--db", path, "--addr", "127.0.0.1:0", "--notices=false", "--metrics=false"}, io.Discard, &logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})
	serving := regexp.MustCompile(`msg=serving addr=(http://[^ ]+/)`)
	var base string
	waittest.For(t, "serve to start", func() bool {
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v\n%s", err, logs.String())
		default:
		}
		if m := serving.FindStringSubmatch(logs.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	if l := logs.String(); !strings.Contains(l, "no staff account can sign in yet") || !strings.Contains(l, "stacks init --db "+path) || !strings.Contains(l, "stacks user add") {
		t.Errorf("serve's log on a library with no staff account does not say to run stacks init or stacks user add:\n%s", l)
	}
	resp, err := http.Get(base + "login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `id="not-set-up"`) || !strings.Contains(string(body), "stacks init") {
		t.Errorf("the sign-in page of a library with no staff account does not say to run stacks init:\n%s", body)
	}
}

// TestPasswordFromPipe: a password piped to standard input is read without a
// "Password: " prompt (no person is there to see it, and it would land in the
// script's output).
func TestPasswordFromPipe(t *testing.T) {
	passwords.BcryptCost = bcrypt.MinCost
	t.Setenv("STACKS_PASSWORD", "")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { io.WriteString(w, "piped-pass-1\n"); w.Close() }()
	was := stdin
	stdin = r
	t.Cleanup(func() { stdin = was })

	path := filepath.Join(t.TempDir(), "lib.db")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"init", "--db", path, "--branch", "mai", "--branch-name", "Main Library", "--admin", "chief"}, &stdout, &stderr); err != nil {
		t.Fatalf("init with the password piped in: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if strings.Contains(stderr.String(), "Password:") || strings.Contains(stdout.String(), "Password:") {
		t.Errorf("init prompted for the password although standard input is a pipe:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	d, err := db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := staff.NewService(d).Authenticate(context.Background(), "chief", "piped-pass-1", "127.0.0.1"); err != nil {
		t.Errorf("the administrator does not sign in with the piped password: %v", err)
	}
}

// TestInitServeCommand: the serve command init suggests can be copied as it
// is: plain stacks serve when the library came from STACKS_DB or the default;
// the path quoted for a shell; a PostgreSQL password whole on a terminal (the
// administrator typed it there), masked elsewhere with a note saying how to
// give it.
func TestInitServeCommand(t *testing.T) {
	const url = "postgres://stacks:s3cret@db.example.org/stacks"
	for _, c := range []struct {
		target          string
		given, terminal bool
		want, note      string
	}{
		{"stacks.db", false, true, "stacks serve", ""},
		{url, false, false, "stacks serve", ""},
		{"/srv/my library.db", true, false, "stacks serve --db '/srv/my library.db'", ""},
		{"postgres://stacks@db.example.org/stacks?sslmode=verify-full", true, false, "stacks serve --db 'postgres://stacks@db.example.org/stacks?sslmode=verify-full'", ""},
		{url, true, true, "stacks serve --db " + url, ""},
		{url, true, false, "stacks serve --db postgres://stacks:xxxxx@db.example.org/stacks", "STACKS_DB"},
	} {
		cmd, note := serveCommand(c.target, c.given, c.terminal)
		if cmd != c.want || (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
			t.Errorf("serveCommand(%q, given %v, terminal %v) = %q, %q; want %q and a note with %q", c.target, c.given, c.terminal, cmd, note, c.want, c.note)
		}
	}
}

// TestHealthcheckAddress: stacks healthcheck asks the address stacks serve
// listens on with the same environment (STACKS_ADDR), not always port 8080.
func TestHealthcheckAddress(t *testing.T) {
	t.Setenv("STACKS_BASE_PATH", "")
	for addr, want := range map[string]string{
		"":                "http://127.0.0.1:8080/healthz",
		":9000":           "http://127.0.0.1:9000/healthz",
		"0.0.0.0:9001":    "http://127.0.0.1:9001/healthz",
		"[::]:9002":       "http://[::1]:9002/healthz",
		"10.1.2.3:9003":   "http://10.1.2.3:9003/healthz",
		"localhost:9004":  "http://localhost:9004/healthz",
		"not an address":  "http://127.0.0.1:8080/healthz",
		"127.0.0.1:65000": "http://127.0.0.1:65000/healthz",
	} {
		t.Setenv("STACKS_ADDR", addr)
		if got := healthURL(); got != want {
			t.Errorf("STACKS_ADDR=%q: health URL %s, want %s", addr, got, want)
		}
	}
	t.Setenv("STACKS_ADDR", ":9005")
	t.Setenv("STACKS_BASE_PATH", "/library")
	if got, want := healthURL(), "http://127.0.0.1:9005/library/healthz"; got != want {
		t.Errorf("under STACKS_BASE_PATH: %s, want %s", got, want)
	}
}
