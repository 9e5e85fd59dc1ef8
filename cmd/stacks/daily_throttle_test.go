package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/waittest"
)

// TestDailySweepsSignInCounts: stacks daily deletes the sign-in counts of every
// site (staff's, patrons', SIP2's) whose window and lockout are over, and keeps
// a lockout still running and a count still in its window.
func TestDailySweepsSignInCounts(t *testing.T) {
	path, sqlDB, count := smallDemo(t)
	old, now := "2001-01-01T00:00:00Z", db.FormatTime(time.Now())
	if _, err := sqlDB.Exec(`INSERT INTO login_throttle (key, failures, first_at, locked_until) VALUES
		('user:old', 2, ?1, NULL), ('card:P0001', 5, ?1, ?1), ('login:kiosk|10.0.0.9', 1, ?1, NULL), ('pin:1', 3, ?1, NULL),
		('addr:10.0.0.1', 20, ?1, '2999-01-01T00:00:00Z'), ('user:new', 1, ?2, NULL)`, old, now); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"daily", "--db", path, "--force"}, &out, &out); err != nil {
		t.Fatalf("daily: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "4 sign-in counts over swept") {
		t.Errorf("daily printed:\n%s", out.String())
	}
	if n := count(`SELECT count(*) FROM login_throttle WHERE key IN ('user:old', 'card:P0001', 'login:kiosk|10.0.0.9', 'pin:1')`); n != 0 {
		t.Errorf("%d of the counts that are over are still there", n)
	}
	if n := count(`SELECT count(*) FROM login_throttle WHERE key IN ('addr:10.0.0.1', 'user:new')`); n != 2 {
		t.Errorf("%d of the running lockout and count kept, want 2", n)
	}
}

// TestServerSweepsSignInCounts: a running server (stacks serve, stacks fcgi)
// sweeps the sign-in counts that are over as it removes expired sessions, so
// that one whose daily jobs do not run does not keep every name tried; a
// lockout still running stays.
func TestServerSweepsSignInCounts(t *testing.T) {
	path, sqlDB, count := smallDemo(t)
	old := "2001-01-01T00:00:00Z"
	if _, err := sqlDB.Exec(`INSERT INTO login_throttle (key, failures, first_at, locked_until) VALUES
		('user:old', 2, ?1, NULL), ('addr:10.0.0.1', 20, ?1, '2999-01-01T00:00:00Z')`, old); err != nil {
		t.Fatal(err)
	}
	d, err := db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sweepExpired(ctx, d, slog.New(slog.DiscardHandler)); close(done) }()
	defer func() { cancel(); <-done }()
	waittest.For(t, "the count that is over swept", func() bool {
		return count(`SELECT count(*) FROM login_throttle WHERE key = 'user:old'`) == 0
	})
	if n := count(`SELECT count(*) FROM login_throttle WHERE key = 'addr:10.0.0.1'`); n != 1 {
		t.Errorf("the running lockout: %d rows, want 1", n)
	}
}
