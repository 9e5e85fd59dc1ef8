package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/metrics"
	"github.com/stacks-ils/stacks/sip"
	"github.com/stacks-ils/stacks/sip/siptest"
	"github.com/stacks-ils/stacks/stackstest"
)

func TestNamedMessage(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC) // dbtest.Monday, without importing dbtest (make test runs its importers again on PostgreSQL)
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
	if n := len(m.Series("stacks_sip_message_duration_seconds")); n < 4 {
		t.Errorf("SIP latency series for %d message types, want login, status, checkout and checkin", n)
	}
	for _, action := range []string{"checkout", "checkin"} {
		var got float64
		for _, s := range m.Series("stacks_circulation_total") {
			if s.Labels["action"] == action && s.Labels["channel"] == "sip" {
				got = s.Value
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
	if err := siptest.Login(t, d, "sorter1", "s0rter-pass"); err != nil {
		t.Fatalf("log in as the new account: %v", err)
	}
	var accts []sip.Account
	err = d.Read(ctx, func(tx *db.Tx) (err error) {
		accts, err = sip.ListAccounts(tx)
		return err
	})
	d.Close()
	i := slices.IndexFunc(accts, func(a sip.Account) bool { return a.Username == "sorter1" })
	if err != nil || i < 0 || accts[i].BranchCode != "EAS" || accts[i].Institution != "EAS" {
		t.Fatalf("the new account among %+v, %v", accts, err)
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

	// set changes what it is given and keeps the rest; list shows it.
	out.Reset()
	err = run(ctx, []string{"sip-account", "set", "--db", path, "--username", "sorter1", "--checked-in-ok=true",
		"--sort-bins", "hold=1,shelf=3", "--deny", "11,37", "--same-item", "renew", "--language", "001"}, &out, &out)
	if err != nil || !strings.Contains(out.String(), "checked-in-ok=true hold-items=barcode sort-bins=shelf=3,hold=1 deny=11,37 contact-without-pin=false same-item=renew language=001") {
		t.Fatalf("sip-account set: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"sip-account", "list", "--db", path}, &out, &out); err != nil ||
		!strings.Contains(out.String(), "sorter1") || !strings.Contains(out.String(), "deny=11,37") || !strings.Contains(out.String(), "never") {
		t.Fatalf("sip-account list: %v\n%s", err, out.String())
	}
	out.Reset()
	err = run(ctx, []string{"sip-account", "set", "--db", path, "--username", "sorter1", "--hold-items", "isbn"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "barcodes or titles") {
		t.Errorf("a bad hold-items: %v", err)
	}
	err = run(ctx, []string{"sip-account", "set", "--db", path, "--username", "sorter1", "--language", "eng"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "not a SIP2 language code") {
		t.Errorf("a bad language: %v", err)
	}
	err = run(ctx, []string{"sip-account", "set", "--db", path, "--username", "nobody"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "no SIP account") {
		t.Errorf("an unknown account: %v", err)
	}
	out.Reset()
	if err := run(ctx, []string{"sip-account", "set", "--db", path, "--username", "sorter1", "--active=false"}, &out, &out); err != nil {
		t.Fatalf("deactivate: %v\n%s", err, out.String())
	}
	d, err = db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := siptest.Login(t, d, "sorter1", "s0rter-pass"); err == nil {
		t.Errorf("a deactivated account logged in")
	}

	// password, lockouts, unlock.
	t.Setenv("STACKS_PASSWORD", "new-s0rter")
	out.Reset()
	if err := run(ctx, []string{"sip-account", "set", "--db", path, "--username", "sorter1", "--active=true"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"sip-account", "password", "--db", path, "--username", "sorter1"}, &out, &out); err != nil {
		t.Fatalf("password: %v\n%s", err, out.String())
	}
	if err := siptest.Login(t, d, "sorter1", "new-s0rter"); err != nil {
		t.Errorf("the new password: %v", err)
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO login_throttle (key, failures, first_at, locked_until)
			VALUES ('login:sorter1|10.0.0.5', 5, ?, ?)`,
			db.FormatTime(d.Now()), db.FormatTime(d.Now().Add(10*time.Minute)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(ctx, []string{"sip-account", "lockouts", "--db", path}, &out, &out); err != nil || !strings.Contains(out.String(), "login:sorter1|10.0.0.5") || !strings.Contains(out.String(), "locked until") {
		t.Fatalf("lockouts: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"sip-account", "unlock", "--db", path, "--key", "login:sorter1|10.0.0.5"}, &out, &out); err != nil {
		t.Fatalf("unlock: %v\n%s", err, out.String())
	}
	if err := run(ctx, []string{"sip-account", "unlock", "--db", path, "--key", "login:sorter1|10.0.0.5"}, &out, &out); err == nil || !strings.Contains(err.Error(), "ended already") {
		t.Errorf("unlocking twice: %v", err)
	}
}

// sipMetricsEnv starts the SIP listener as serve does, with metrics, on a small
// demo library; it returns the listener's address, the metrics and the log.
func sipMetricsEnv(t *testing.T, f sipFlags) (string, *metrics.Metrics, *stackstest.Buffer) {
	t.Helper()
	ctx := context.Background()
	d, err := db.Open(filepath.Join(t.TempDir(), "stacks.db"), db.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Create(ctx, d, demo.Options{Titles: 10, Patrons: 10}); err != nil {
		t.Fatal(err)
	}
	logs := &stackstest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	m := metrics.New(d)
	f.addr = "127.0.0.1:0"
	if f.idleTimeout == 0 {
		f.idleTimeout = time.Minute
	}
	if f.currency == "" {
		f.currency = "USD"
	}
	stop, err := startSIP(ctx, &f, d, logger, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	addr := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(logs.String())
	if addr == nil {
		t.Fatalf("no address in the log:\n%s", logs.String())
	}
	return addr[1], m, logs
}

// exchangeRaw writes msg and a CR and returns the answer up to its CR, or fails.
func exchangeRaw(t *testing.T, c net.Conn, r *bufio.Reader, msg string) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(msg + "\r")); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
	resp, err := r.ReadString('\r')
	if err != nil {
		t.Fatalf("%q: no answer (%v)", msg, err)
	}
	return strings.TrimSuffix(resp, "\r")
}

// TestSIPInvalidUTF8: a message whose identifier is not
// text (9 and half a UTF-8 sequence) used to become a Prometheus label, which
// panicked; the connection closed unanswered and the stack was logged. Each such
// message is now answered with a request to resend (96), as any bytes that cannot
// be read as a message are, with metrics on; the connection stays usable, and nothing panics. Invalid
// UTF-8 inside the fields of known messages is answered too.
func TestSIPInvalidUTF8(t *testing.T) {
	addr, m, logs := sipMetricsEnv(t, sipFlags{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	// Before a login: answered as any unreadable message is.
	if got := exchangeRaw(t, c, r, "9\xC3"); got != "96" {
		t.Errorf("before a login: answered %q, want 96", got)
	}
	if got := exchangeRaw(t, c, r, "9300CNkiosk|COkiosk|CPCEN|"); got != "941" {
		t.Fatalf("login: %q", got)
	}
	for _, msg := range []string{"9\xC3", "\xC3\x28", "\xff\xfe", "\x80\x80", "9\xC3AY0AZFFFF", "\xed\xa0\x80", "93\xff", "9\xC3\xff\xfe|AA\xC3|"} {
		if got := exchangeRaw(t, c, r, msg); !strings.HasPrefix(got, "96") {
			t.Errorf("%q: answered %q, want 96 (send it again)", msg, got)
		}
		// Garbage five times in a row closes the connection: a good message between.
		if got := exchangeRaw(t, c, r, "9900302.00"); !strings.HasPrefix(got, "98") {
			t.Fatalf("status after %q: %q", msg, got)
		}
	}
	// Invalid UTF-8 in the fields of messages the server knows.
	for _, msg := range []string{
		"2300120261130    100000AOCEN|AA\xff\xfe|AC|AD\xC3|",
		"1720261130    100000AO\xC3|AB\xC3\x28|AC|",
		"09N20261130    10000020261130    100000AP\xff|AOCEN|AB\x80|AC|",
		"6300120261130    100000          AOCEN|AAP0001\xC3|AC|",
	} {
		if got := exchangeRaw(t, c, r, msg); len(got) < 2 || got[:2] != map[byte]string{'2': "24", '1': "18", '0': "10", '6': "64"}[msg[0]] {
			t.Errorf("%q: answered %q", msg, got)
		}
	}
	for _, bad := range []string{"panic", "crashed", "goroutine "} {
		if strings.Contains(logs.String(), bad) {
			t.Errorf("the log has %q:\n%s", bad, logs.String())
		}
	}
	if len(m.Series("stacks_sip_message_duration_seconds")) == 0 {
		t.Errorf("no SIP message latency series after the exchange")
	}
}

// knownSIPMessages are the requests the SIP server answers.
var knownSIPMessages = map[string]bool{"93": true, "99": true, "23": true, "63": true, "11": true, "09": true,
	"17": true, "29": true, "65": true, "15": true, "35": true, "37": true, "97": true, "01": true, "25": true, "19": true}

// TestSIPMetricLabelsBounded: every two bytes a terminal
// sends used to become a label of stacks_sip_message_duration_seconds, so that
// unknown messages grew /metrics without bound. Labels are now the message codes
// the server answers, and "other" for everything else.
func TestSIPMetricLabelsBounded(t *testing.T) {
	addr, m, _ := sipMetricsEnv(t, sipFlags{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if got := exchangeRaw(t, c, r, "9300CNkiosk|COkiosk|CPCEN|"); got != "941" {
		t.Fatalf("login: %q", got)
	}
	sent := 0
	for a := byte('0'); a <= 'z'; a += 3 {
		for b := byte('0'); b <= 'z'; b += 3 {
			code := string([]byte{a, b})
			if knownSIPMessages[code] {
				continue
			}
			if code[0] >= '0' && code[0] <= '9' && code[1] >= '0' && code[1] <= '9' {
				// A message the server does not support gets no answer; the
				// next status answer shows that none came.
				if _, err := c.Write([]byte(code + "XYZ\r")); err != nil {
					t.Fatal(err)
				}
			} else if got := exchangeRaw(t, c, r, code+"XYZ"); got != "96" {
				t.Fatalf("%q: %q, want 96", code, got)
			}
			sent++
			if sent%4 == 0 { // five unusable messages in a row close the connection
				if got := exchangeRaw(t, c, r, "9900302.00"); !strings.HasPrefix(got, "98") {
					t.Fatalf("status: %q", got)
				}
			}
		}
	}
	labels := map[string]bool{}
	for _, s := range m.Series("stacks_sip_message_duration_seconds") {
		labels[s.Labels["message"]] = true
	}
	want := map[string]bool{"93": true, "99": true, "other": true}
	if len(labels) != len(want) {
		t.Errorf("after %d distinct unknown messages, the SIP labels are %v; want %v", sent, slices.Sorted(maps.Keys(labels)), slices.Sorted(maps.Keys(want)))
	}
	for l := range want {
		if !labels[l] {
			t.Errorf("no %q label", l)
		}
	}
}

// TestSIPConnectionFlags: --sip-max-conns-per-addr and
// --sip-login-timeout (and their environment variables) reach the SIP server: the
// connection past the limit from one address is refused, and one that does not log
// in is closed after the timeout. Negative values are usage errors.
func TestSIPConnectionFlags(t *testing.T) {
	parse := func(t *testing.T, args ...string) sipFlags {
		t.Helper()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f := registerSIPFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return *f
	}
	if f := parse(t); f.maxConnsPerAddr != 16 || f.loginTimeout != 30*time.Second {
		t.Errorf("defaults: %d connections an address, login timeout %v; want 16, 30s", f.maxConnsPerAddr, f.loginTimeout)
	}
	t.Setenv("STACKS_SIP_MAX_CONNS_PER_ADDR", "40")
	t.Setenv("STACKS_SIP_LOGIN_TIMEOUT", "10s")
	if f := parse(t); f.maxConnsPerAddr != 40 || f.loginTimeout != 10*time.Second {
		t.Errorf("from the environment: %d, %v; want 40, 10s", f.maxConnsPerAddr, f.loginTimeout)
	}

	addr, _, logs := sipMetricsEnv(t, parse(t, "--sip-max-conns-per-addr", "2", "--sip-login-timeout", "300ms"))
	if !strings.Contains(logs.String(), "max_conns_per_addr=2") || !strings.Contains(logs.String(), "login_timeout=300ms") {
		t.Errorf("the start-up log does not show the limits:\n%s", logs.String())
	}
	start := time.Now()
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	// closedAfter returns how long after start the server closed c.
	closedAfter := func(c net.Conn) time.Duration {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(c); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the connection is still open after 5 s")
		}
		return time.Since(start)
	}
	// The third is refused as it arrives, not closed at the login timeout.
	closedAfter(conns[2])
	waitForLog(t, logs, "sip connection refused: too many connections from this address")
	if d := closedAfter(conns[0]); d < 250*time.Millisecond {
		t.Errorf("a connection without a login was closed after %v, before --sip-login-timeout", d)
	}

	d, err := db.Open(filepath.Join(t.TempDir(), "x.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, args := range [][]string{{"--sip-max-conns-per-addr", "-1"}, {"--sip-login-timeout", "-5s"}} {
		f := parse(t, append(args, "--sip-addr", "127.0.0.1:0")...)
		if _, err := startSIP(context.Background(), &f, d, slog.New(slog.NewTextHandler(io.Discard, nil)), nil); exitCode(err) != 2 {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
