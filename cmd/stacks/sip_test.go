package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/metrics"
	"github.com/stacks-ils/stacks/sip"
)

func TestNamedMessage(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	d := "20261130    100000"
	tests := []struct{ arg, want string }{
		{"status", "9900302.00"},
		{"patron-status:P0001:1234", "23001" + d + "AOCEN|AAP0001|AC|AD1234|"},
		{"patron-status:P0001", "23001" + d + "AOCEN|AAP0001|AC|"},
		{"patron-info:P0001:1234:charged", "63001" + d + "  Y       AOCEN|AAP0001|AC|AD1234|"},
		{"checkout:P0001:I00001", "11YN" + d + strings.Repeat(" ", 18) + "AOCEN|AAP0001|ABI00001|AC|"},
		{"checkin:I00001", "09N" + d + d + "AP|AOCEN|ABI00001|AC|"},
		{"item:I00001", "17" + d + "AOCEN|ABI00001|AC|"},
		{"renew:P0001:I00001:1234", "29NN" + d + strings.Repeat(" ", 18) + "AOCEN|AAP0001|ABI00001|AC|AD1234|"},
		{"renew-all:P0001", "65" + d + "AOCEN|AAP0001|AC|"},
		{"hold:P0003:I00010:EAS", "15+" + d + "BSEAS|BY2|AOCEN|AAP0003|ABI00010|AC|"},
		{"hold-cancel:P0003:I00010", "15-" + d + "AOCEN|AAP0003|ABI00010|AC|"},
		{"pay:P0002:5.00", "37" + d + "0100USDBV5.00|AOCEN|AAP0002|AC|"},
		{"end:P0001", "35" + d + "AOCEN|AAP0001|AC|"},
		{"resend", "97"},
		{"9900302.00", "9900302.00"},
	}
	for _, tt := range tests {
		got, err := namedMessage(tt.arg, "CEN", now)
		if err != nil || got != tt.want {
			t.Errorf("namedMessage(%q) = %q, %v; want %q", tt.arg, got, err, tt.want)
		}
		if _, err := sip.Parse([]byte(got)); err != nil {
			t.Errorf("namedMessage(%q) = %q, which does not parse: %v", tt.arg, got, err)
		}
	}
	for _, bad := range []string{"bogus", "checkout:P0001", "patron-info:P0001:1234:everything", "status:x"} {
		if _, err := namedMessage(bad, "CEN", now); err == nil {
			t.Errorf("namedMessage(%q) accepted", bad)
		}
	}
}

// TestSIPClient starts the SIP listener as serve does, on the demo library, and
// runs stacks sip-client against it.
func TestSIPClient(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(filepath.Join(t.TempDir(), "stacks.db"), db.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Create(ctx, d, demo.Options{Titles: 50, Patrons: 10}); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	m := metrics.New(d)
	stop, err := startSIP(ctx, &sipFlags{addr: "127.0.0.1:0", sortBins: "hold=1,shelf=2", idleTimeout: time.Minute, currency: "usd"}, d, logger, m)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	addr := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(logs.String())
	if addr == nil {
		t.Fatalf("no address in the log:\n%s", logs.String())
	}

	var out bytes.Buffer
	err = run(ctx, []string{"sip-client", "--addr", addr[1], "--user", "kiosk", "--password", "kiosk", "--institution", "CEN", "--checksum",
		"status", "checkout:P0001:I00001", "checkin:I00001"}, &out, &out)
	if err != nil {
		t.Fatalf("sip-client: %v\n%s", err, out.String())
	}
	for _, want := range []string{"> 9300CNkiosk|CO****|CP|AY0AZ", "< 941AY0AZ", "< 98YYYY", "< 121NUY", "< 101YUN", "|CL2|"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output has no %q:\n%s", want, out.String())
		}
	}
	// The metrics saw the messages and the checkout and checkin they completed.
	if n := testutil.CollectAndCount(m.Registry(), "stacks_sip_message_duration_seconds"); n < 4 {
		t.Errorf("SIP latency series for %d message types, want login, status, checkout and checkin", n)
	}
	for _, action := range []string{"checkout", "checkin"} {
		var got float64
		mfs, _ := m.Registry().Gather()
		for _, mf := range mfs {
			if mf.GetName() == "stacks_circulation_total" {
				for _, s := range mf.GetMetric() {
					labels := map[string]string{}
					for _, l := range s.GetLabel() {
						labels[l.GetName()] = l.GetValue()
					}
					if labels["action"] == action && labels["channel"] == "sip" {
						got = s.GetCounter().GetValue()
					}
				}
			}
		}
		if got != 1 {
			t.Errorf("SIP %ss counted %v, want 1", action, got)
		}
	}

	out.Reset()
	err = run(ctx, []string{"sip-client", "--addr", addr[1], "--user", "kiosk", "--password", "wrong", "status"}, &out, &out)
	if err == nil || !strings.Contains(out.String(), "< 940") {
		t.Errorf("a wrong password: err %v, output\n%s", err, out.String())
	}
	if err := run(ctx, []string{"sip-client", "--user", "kiosk", "--password", "kiosk", "nonsense"}, &out, &out); exitCode(err) != 2 {
		t.Errorf("an unknown message: %v, want a usage error", err)
	}
	if _, err := startSIP(ctx, &sipFlags{addr: "127.0.0.1:0", sortBins: "attic=1", currency: "USD"}, d, logger, nil); exitCode(err) != 2 {
		t.Errorf("bad sort bins: %v, want a usage error", err)
	}
}

// TestSIPAccountAdd: stacks sip-account add creates an account a machine can log
// in with; a branch that does not exist is refused with a message, and so is a
// missing password.
func TestSIPAccountAdd(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lib.db")
	var out bytes.Buffer
	if err := run(ctx, []string{"demo", "--db", path, "--titles", "10", "--patrons", "10"}, &out, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	t.Setenv("STACKS_PASSWORD", "s0rter-pass")
	out.Reset()
	err := run(ctx, []string{"sip-account", "add", "--db", path, "--username", "sorter1", "--institution", "EAS", "--branch", "EAS"}, &out, &out)
	if err != nil || !strings.Contains(out.String(), `created SIP2 account "sorter1"`) {
		t.Fatalf("sip-account add: %v\n%s", err, out.String())
	}
	d, err := db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := sip.Authenticate(ctx, d, "sorter1", "s0rter-pass")
	d.Close()
	if err != nil || a.BranchCode != "EAS" || a.Institution != "EAS" {
		t.Fatalf("log in as the new account: %+v, %v", a, err)
	}

	out.Reset()
	err = run(ctx, []string{"sip-account", "add", "--db", path, "--username", "sorter2", "--institution", "X", "--branch", "NOPE"}, &out, &out)
	if err == nil || exitCode(err) == 0 || strings.Contains(err.Error(), "sql") {
		t.Errorf("unknown branch: %v, want a plain refusal", err)
	}
	out.Reset()
	err = run(ctx, []string{"sip-account", "add", "--db", path, "--username", "sorter1", "--institution", "EAS", "--branch", "EAS"}, &out, &out)
	if err == nil || exitCode(err) == 0 {
		t.Errorf("the same username twice: %v, want a refusal", err)
	} else {
		t.Logf("refusals read: %v", err)
	}
	if err := run(ctx, []string{"sip-account"}, &out, &out); exitCode(err) != 2 {
		t.Errorf("sip-account without add: exit %d, want 2", exitCode(err))
	}
}
