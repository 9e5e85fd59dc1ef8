package pgtest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/waittest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		ownClusterChild()
	}
	os.Exit(pgtest.Main(m))
}

// childEnv makes the test binary the child process of
// TestOwnClusterEndsWithTheProcess.
const childEnv = "STACKS_PGTEST_CHILD"

// ownClusterChild starts the process's own cluster (its URL unset) and exits
// at once, without Main's cleanup, as a test process that panics or times out.
func ownClusterChild() {
	if _, err := pgtest.Template("", nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

// TestOwnClusterEndsWithTheProcess: a test process given no cluster
// (STACKS_TEST_POSTGRES unset) starts its own, and the cluster is stopped and
// its directory deleted when the process ends, even without Main's cleanup.
func TestOwnClusterEndsWithTheProcess(t *testing.T) {
	if !pgtest.Selected(db.Postgres) {
		t.Skip("PostgreSQL is not selected for this run")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, pgtest.Env+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// Output returns when the child has ended and closed its output: the
	// cluster and the process that stops it must not hold it open.
	if _, err := cmd.Output(); err != nil {
		t.Fatalf("the child: %v\n%s", err, stderr.Bytes())
	}
	m := regexp.MustCompile(`started a throwaway PostgreSQL cluster in (\S+) `).FindSubmatch(stderr.Bytes())
	if m == nil {
		t.Fatalf("the child did not say where it started its cluster:\n%s", stderr.Bytes())
	}
	dir := string(m[1])
	waittest.For(t, "the child's cluster in "+dir+" to be deleted", func() bool {
		_, err := os.Stat(dir)
		return errors.Is(err, fs.ErrNotExist)
	})
}

// TestTemplateCopies: a named template is built once, with what build wrote, and
// each copy of it is a database of its own.
func TestTemplateCopies(t *testing.T) {
	if !pgtest.Selected(db.Postgres) {
		t.Skip("PostgreSQL is not selected for this run")
	}
	ctx := context.Background()
	builds := 0
	build := func(d *db.DB) error {
		builds++
		return d.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('MAIN', 'Main')`)
			return err
		})
	}
	var urls []string
	for range 2 {
		tmpl, err := pgtest.Template("one branch", build)
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, pgtest.CopyURL(t, tmpl))
	}
	if builds != 1 || urls[0] == urls[1] {
		t.Fatalf("built %d times (want 1); copies %v (want two databases)", builds, urls)
	}
	a, err := db.Open(urls[0], db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('EAST', 'East')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b, err := db.Open(urls[1], db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var n int
	if err := b.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM branches`).Scan(&n)
	}); err != nil || n != 1 {
		t.Fatalf("the second copy has %d branches (err %v), want the template's 1", n, err)
	}
}
