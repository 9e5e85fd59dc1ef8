package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDailySessions: stacks daily removes the expired sessions of both sites
// and keeps the live ones, which is all a CGI install has to clean them.
func TestDailySessions(t *testing.T) {
	path, sqlDB, count := smallDemo(t)
	for _, table := range []string{"sessions", "opac_sessions"} {
		if _, err := sqlDB.Exec(`INSERT INTO ` + table + ` (token_hash, data, expiry) VALUES
			('expired', x'00', '2001-01-01T00:00:00Z'), ('live', x'00', '2999-01-01T00:00:00Z')`); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"daily", "--db", path, "--force"}, &out, &out); err != nil {
		t.Fatalf("daily: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "1 expired staff sessions and 1 expired patron sessions removed") {
		t.Errorf("daily printed:\n%s", out.String())
	}
	for _, table := range []string{"sessions", "opac_sessions"} {
		if n := count(`SELECT count(*) FROM ` + table + ` WHERE token_hash = 'expired'`); n != 0 {
			t.Errorf("%s: the expired session is still there", table)
		}
		if n := count(`SELECT count(*) FROM ` + table + ` WHERE token_hash = 'live'`); n != 1 {
			t.Errorf("%s: the live session was removed", table)
		}
	}
}
