package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db/pgtest"
)

// TestMain stops the PostgreSQL cluster the tests started, if they started one.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestPostgresCommands (PostgreSQL only; the SQLite counterparts are
// TestCheckCommand and TestBackupCommand): --db takes a postgres:// URL for
// migrate and backup, the output never shows the password, and a server that
// is not there gets a message saying what to do.
func TestPostgresCommands(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	// The same URL with a password the trusting test server ignores.
	withPassword := strings.Replace(url, "postgres://stacks@", "postgres://stacks:hunter2@", 1)
	if withPassword == url {
		t.Fatalf("cannot add a password to %s", url)
	}

	var out bytes.Buffer
	if err := run(ctx, []string{"migrate", "--db", withPassword}, &out, &out); err != nil {
		t.Fatalf("stacks migrate: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "up to date") {
		t.Errorf("stacks migrate on a migrated database said %q", out.String())
	}

	dest := filepath.Join(t.TempDir(), "library.dump")
	out.Reset()
	if err := run(ctx, []string{"backup", "--db", withPassword, dest}, &out, &out); err != nil {
		t.Fatalf("stacks backup: %v\n%s", err, out.String())
	}
	if fi, err := os.Stat(dest); err != nil || fi.Size() == 0 {
		t.Fatalf("no backup at %s (%v)", dest, err)
	}
	if strings.Contains(out.String(), "hunter2") {
		t.Errorf("the output shows the password: %s", out.String())
	}

	out.Reset()
	err := run(ctx, []string{"migrate", "--db", "postgres://stacks:hunter2@127.0.0.1:1/none?connect_timeout=2"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "is the server running") || strings.Contains(err.Error()+out.String(), "hunter2") {
		t.Fatalf("stacks migrate with no server: %v (output %q); want a message saying what to check, without the password", err, out.String())
	}
}
