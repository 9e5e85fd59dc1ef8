package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestDaily: stacks daily declares the demo's long overdues lost once (a second
// run bills nobody), queues their bills, runs the notices, and stacks check finds
// the database sound afterwards.
func TestDaily(t *testing.T) {
	ctx := context.Background()
	path, sqlDB, count := smallDemo(t)
	var out bytes.Buffer
	if _, err := sqlDB.Exec(`UPDATE circ_rules SET lost_after_days = 1`); err != nil {
		t.Fatal(err)
	}
	overdue := count(`SELECT count(*) FROM loans WHERE returned_at IS NULL AND due_at < strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-1 day')`)
	if overdue == 0 {
		t.Fatal("the demo library has no loan overdue by more than a day")
	}

	out.Reset()
	if err := run(ctx, []string{"daily", "--db", path, "--force"}, &out, &out); err != nil {
		t.Fatalf("daily: %v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`lost items: (\d+) loans declared lost`).FindStringSubmatch(out.String())
	if m == nil || m[1] == "0" || !strings.Contains(out.String(), "messages queued") {
		t.Fatalf("daily printed:\n%s", out.String())
	}
	if n := count(`SELECT count(*) FROM loans WHERE lost_at IS NOT NULL`); n != overdue {
		t.Errorf("%d loans lost, want the %d overdue by more than a day", n, overdue)
	}
	lines := count(`SELECT count(*) FROM ledger`)
	if n := count(`SELECT count(*) FROM notice_items WHERE trigger = 'lost_bill'`); n == 0 {
		t.Error("no lost bill notice queued")
	}

	out.Reset()
	if err := run(ctx, []string{"daily", "--db", path}, &out, &out); err != nil {
		t.Fatalf("second daily: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "lost items: 0 loans declared lost") || count(`SELECT count(*) FROM ledger`) != lines {
		t.Errorf("the second run billed again:\n%s", out.String())
	}

	out.Reset()
	if err := run(ctx, []string{"check", "--db", path}, &out, &out); err != nil {
		t.Errorf("check after daily: %v\n%s", err, out.String())
	}
}
