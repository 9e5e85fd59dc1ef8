package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestNoticesRun: stacks notices run from cron. The demo library queues its first
// notices when it is created; with those forgotten, --dry-run shows what would go
// out and changes nothing, a run queues it once, and a second run the same day
// does not run the day again. Without a relay, email stays queued.
func TestNoticesRun(t *testing.T) {
	ctx := context.Background()
	path, sqlDB, count := smallDemo(t)
	var out bytes.Buffer
	demoMessages := count(`SELECT count(*) FROM notice_messages`)
	if demoMessages == 0 {
		t.Fatal("the demo library has no notices in its queue")
	}
	for _, q := range []string{`DELETE FROM notice_items`, `DELETE FROM notice_messages`, `DELETE FROM notice_runs`} {
		if _, err := sqlDB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}

	out.Reset()
	if err := run(ctx, []string{"notices", "run", "--db", path, "--dry-run"}, &out, &out); err != nil {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "would be queued (nothing changed)") || !strings.Contains(out.String(), "Subject: ") {
		t.Errorf("dry run printed:\n%s", out.String())
	}
	if n := count(`SELECT count(*) FROM notice_messages`) + count(`SELECT count(*) FROM notice_items`); n != 0 {
		t.Fatalf("the dry run wrote %d rows", n)
	}

	out.Reset()
	if err := run(ctx, []string{"notices", "run", "--db", path, "--force"}, &out, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "messages queued") || !strings.Contains(out.String(), "email notices stay queued") {
		t.Errorf("run printed:\n%s", out.String())
	}
	if n := count(`SELECT count(*) FROM notice_messages WHERE status = 'pending'`); n != demoMessages {
		t.Errorf("queued %d messages, want the demo's %d", n, demoMessages)
	}
	out.Reset()
	if err := run(ctx, []string{"notices", "run", "--db", path}, &out, &out); err != nil {
		t.Fatalf("second run: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "messages queued") {
		t.Errorf("the day ran twice:\n%s", out.String())
	}

	for _, args := range [][]string{
		{"notices"},
		{"notices", "run", "--db", path, "--at", "25:00"},
		{"notices", "run", "--db", path, "--smtp-host", "mail.example.org"},
		{"notices", "run", "--db", path, "--smtp-host", "mail.example.org", "--smtp-from", "x@example.org", "--smtp-starttls", "maybe"},
		{"notices", "run", "--db", path, "--smtp-host", "mail.example.org", "--smtp-from", "x@example.org", "--smtp-starttls", "none", "--smtp-user", "u", "--smtp-password", "p"},
		// Opportunistic STARTTLS would authenticate in clear to a relay (or a
		// man in the middle) that offers no STARTTLS.
		{"notices", "run", "--db", path, "--smtp-host", "mail.example.org", "--smtp-from", "x@example.org", "--smtp-starttls", "opportunistic", "--smtp-user", "u", "--smtp-password", "p"},
		{"notices", "run", "--db", path, "--smtp-host", "mail.example.org", "--smtp-from", "x@example.org", "--smtp-password-file", "/nonexistent"},
	} {
		if err := run(ctx, args, &out, &out); exitCode(err) != 2 {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}
