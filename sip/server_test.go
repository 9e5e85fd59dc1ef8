package sip_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/sip"
	"github.com/stacks-ils/stacks/waittest"
)

// rawConn is a connection that sends and reads bytes exactly.
type rawConn struct {
	t testing.TB
	c net.Conn
	r *bufio.Reader
}

func (e *env) raw() *rawConn {
	e.tb.Helper()
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		e.tb.Fatal(err)
	}
	e.tb.Cleanup(func() { c.Close() })
	return &rawConn{t: e.tb, c: c, r: bufio.NewReader(c)}
}

func (rc *rawConn) write(s string) {
	rc.t.Helper()
	rc.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := rc.c.Write([]byte(s)); err != nil {
		rc.t.Fatalf("write %q: %v", s, err)
	}
}

// read reads up to and including the next delim.
func (rc *rawConn) read(delim byte) string {
	rc.t.Helper()
	rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s, err := rc.r.ReadString(delim)
	if err != nil {
		rc.t.Fatalf("read: %v (got %q)", err, s)
	}
	return s
}

// closed reports whether the server closed the connection within d (an end of
// file, or a reset when it closed with bytes unread).
func (rc *rawConn) closed(d time.Duration) bool {
	rc.c.SetReadDeadline(time.Now().Add(d))
	_, err := io.ReadAll(rc.r)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

func TestFraming(t *testing.T) {
	e := newEnv(t)
	t.Run("CR", func(t *testing.T) {
		rc := e.raw()
		rc.write("9300CNkiosk|COkiosk|CPCEN|\r")
		if got := rc.read('\r'); got != "941\r" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("CRLF", func(t *testing.T) {
		rc := e.raw()
		rc.write("9300CNkiosk|COkiosk|CPCEN|\r\n")
		if got := rc.read('\n'); got != "941\r\n" {
			t.Errorf("got %q, want the terminal's CR LF", got)
		}
	})
	t.Run("LF", func(t *testing.T) {
		rc := e.raw()
		rc.write("9300CNkiosk|COkiosk|CPCEN|\n")
		if got := rc.read('\n'); got != "941\n" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("TwoMessagesInOneWrite", func(t *testing.T) {
		rc := e.raw()
		rc.write("9300CNkiosk|COkiosk|CPCEN|\r\n9900302.00\r\n")
		if got := rc.read('\n'); got != "941\r\n" {
			t.Errorf("first: %q", got)
		}
		if got := rc.read('\n'); !strings.HasPrefix(got, "98YYYY") || !strings.HasSuffix(got, "\r\n") {
			t.Errorf("second: %q", got)
		}
	})
	t.Run("OneMessageInPieces", func(t *testing.T) {
		rc := e.raw()
		for _, part := range []string{"9300CN", "kiosk|CO", "kiosk|CPCEN|", "\r"} {
			rc.write(part)
			time.Sleep(5 * time.Millisecond) // the pieces under test: apart, so that the server reads them apart
		}
		if got := rc.read('\r'); got != "941\r" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("EmptyLinesIgnored", func(t *testing.T) {
		rc := e.raw()
		rc.write("\r\n\r\n9300CNkiosk|COkiosk|CPCEN|\r")
		if got := rc.read('\r'); got != "941\r" {
			t.Errorf("got %q", got)
		}
	})
}

func TestLimits(t *testing.T) {
	e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{IdleTimeout: 300 * time.Millisecond, MaxMessage: 512}})
	t.Run("MessageTooLong", func(t *testing.T) {
		// Answered 96 (a message that could not be read), then closed.
		rc := e.raw()
		rc.write(strings.Repeat("9", 600))
		if got := rc.read('\r'); got != "96\r" {
			t.Errorf("a message over MaxMessage: got %q, want 96", got)
		}
		if !rc.closed(5 * time.Second) {
			t.Error("a message over MaxMessage did not close the connection")
		}
	})
	t.Run("MessageTooLongWithErrorDetection", func(t *testing.T) {
		// A terminal whose messages carry checksums gets one on the 96 too.
		rc := e.raw()
		rc.write(sip.AddErrorDetection("9300CNkiosk|COkiosk|CPCEN|", 0) + "\r")
		if got := rc.read('\r'); !strings.HasPrefix(got, "941AY0AZ") {
			t.Fatalf("login: %q", got)
		}
		rc.write("23001" + sipNow + "AOCEN|AA" + strings.Repeat("1", 600))
		if got, want := rc.read('\r'), "96AZ"+sip.Checksum([]byte("96AZ"))+"\r"; got != want {
			t.Errorf("a message over MaxMessage: got %q, want %q", got, want)
		}
		if !rc.closed(5 * time.Second) {
			t.Error("a message over MaxMessage did not close the connection")
		}
	})
	t.Run("LongestMessage", func(t *testing.T) {
		rc := e.raw()
		rc.write("9300CNkiosk|COkiosk|CP" + strings.Repeat("x", 512-22) + "\r")
		if got := rc.read('\r'); got != "941\r" {
			t.Errorf("a message of MaxMessage bytes: got %q", got)
		}
	})
	t.Run("IdleTimeout", func(t *testing.T) {
		rc := e.raw()
		rc.write("9300CNkiosk|COkiosk|CPCEN|\r")
		rc.read('\r')
		start := time.Now()
		if !rc.closed(5 * time.Second) {
			t.Fatal("an idle connection was not closed")
		}
		if d := time.Since(start); d < 250*time.Millisecond {
			t.Errorf("closed after %v, before the idle timeout", d)
		}
	})
	t.Run("SlowMessage", func(t *testing.T) {
		// A message trickling in a byte at a time is bounded by the idle timeout too.
		rc := e.raw()
		start := time.Now()
		for i := 0; i < 100 && time.Since(start) < 2*time.Second; i++ {
			if _, err := rc.c.Write([]byte("9")); err != nil {
				break
			}
			time.Sleep(20 * time.Millisecond) // the slow client under test
		}
		if !rc.closed(3 * time.Second) {
			t.Error("a message that never ends was not cut off")
		}
	})
}

func TestProtocolErrors(t *testing.T) {
	e := newEnv(t)
	t.Run("GarbageClosesAfterFive", func(t *testing.T) {
		rc := e.raw()
		for i := range 4 {
			rc.write("XX\r")
			if got := rc.read('\r'); got != "96\r" {
				t.Fatalf("garbage %d: got %q, want 96", i+1, got)
			}
		}
		rc.write("XX\r")
		if !rc.closed(5 * time.Second) {
			t.Error("the fifth unusable message in a row did not close the connection")
		}
	})
	t.Run("GoodMessageResetsCount", func(t *testing.T) {
		rc := e.raw()
		for range 3 {
			for range 4 {
				rc.write("\x00\xff\x01\r")
				rc.read('\r')
			}
			rc.write("9300CNkiosk|COkiosk|CPCEN|\r")
			if got := rc.read('\r'); got != "941\r" {
				t.Fatalf("got %q", got)
			}
		}
	})
	t.Run("UnauthenticatedClosesAfterFive", func(t *testing.T) {
		rc := e.raw()
		for range 4 {
			rc.write("9900302.00\r")
			if got := rc.read('\r'); got != "940\r" {
				t.Fatalf("got %q", got)
			}
		}
		rc.write("9900302.00\r")
		if got := rc.read('\r'); got != "940\r" {
			t.Fatalf("got %q", got)
		}
		if !rc.closed(5 * time.Second) {
			t.Error("five messages without a login did not close the connection")
		}
	})
	t.Run("FailedLoginsCloseAfterThree", func(t *testing.T) {
		rc := e.raw()
		for range 2 {
			rc.write("9300CNkiosk|COwrong|CPCEN|\r")
			if got := rc.read('\r'); got != "940\r" {
				t.Fatalf("got %q", got)
			}
		}
		rc.write("9300CNkiosk|COwrong|CPCEN|\r")
		rc.read('\r')
		if !rc.closed(5 * time.Second) {
			t.Error("three failed logins did not close the connection")
		}
	})
}

// TestConcurrentTerminals runs terminals in parallel, each checking items out and
// in, as a branch's self-checks and sorter do.
func TestConcurrentTerminals(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := sip.Dial(context.Background(), e.addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.ErrorDetection = i%2 == 0
			if err := c.Login("kiosk", "kiosk", "CEN"); err != nil {
				errs <- err
				return
			}
			barcode := "I0000" + string(rune('1'+i))
			for range 5 {
				resp, err := c.Send(checkoutMsg("P0001", barcode))
				if err != nil || !strings.HasPrefix(resp, "121") {
					errs <- errors.New("checkout " + barcode + ": " + resp)
					return
				}
				resp, err = c.Send(checkinMsg(barcode))
				if err != nil || !strings.HasPrefix(resp, "101") {
					errs <- errors.New("checkin " + barcode + ": " + resp)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestShutdown: a connection waiting for its next message is closed at once, and
// the server stops accepting.
func TestShutdown(t *testing.T) {
	d := openDemoCopy(t, smallDemo, db.Options{})
	srv := sip.New(sip.Config{DB: d})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	e := &env{tb: t, d: d, srv: srv, addr: ln.Addr().String()}
	c := e.client()
	if resp := send(t, c, "9900302.00"); !strings.HasPrefix(resp, "98") {
		t.Fatalf("status: %q", resp)
	}
	// The idle client does not hold Shutdown up: it would return the context's
	// error.
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Limit)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-done; !errors.Is(err, sip.ErrServerClosed) {
		t.Errorf("Serve returned %v", err)
	}
	if _, err := c.Send("9900302.00"); err == nil {
		t.Error("the connection still answers after Shutdown")
	}
	if _, err := net.DialTimeout("tcp", e.addr, time.Second); err == nil {
		t.Error("the server still accepts connections after Shutdown")
	}
	// A second Shutdown (a second signal) returns at once, without a panic.
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("the second Shutdown: %v", err)
	}
}

// TestBareMessages sends each kind of request of the transcripts with its fixed part
// only, no fields at all, and then with every field empty: each is answered with
// its response, the required fields there, and the connection stays usable.
func TestBareMessages(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	files, _ := filepath.Glob("testdata/*.txt")
	seen := map[string]bool{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			req, ok := strings.CutPrefix(line, "> ")
			if !ok {
				continue
			}
			m, err := sip.Parse([]byte(req))
			if err != nil || seen[m.ID] || m.ID == "93" || m.ID == "97" {
				continue
			}
			seen[m.ID] = true
			empty := m.ID + m.Fixed
			for _, f := range m.Fields {
				empty += f.ID + "|"
			}
			for _, msg := range []string{m.ID + m.Fixed, empty} {
				resp := send(t, c, msg)
				want := responseIDs[m.ID]
				if !strings.HasPrefix(resp, want) {
					t.Errorf("%s: got %q, want a %s response", msg, resp, want)
				}
				if m.ID != "99" && m.ID != "17" && m.ID != "19" && !strings.Contains(resp, "AO") { // 18 and 20 have no AO
					t.Errorf("%s: %q has no institution (AO)", msg, resp)
				}
			}
		}
	}
	if len(seen) < 11 {
		t.Errorf("only %d kinds of request in the transcripts", len(seen))
	}
	if resp := send(t, c, "9900302.00"); !strings.HasPrefix(resp, "98") {
		t.Errorf("afterwards, status: %q", resp)
	}
}

// responseIDs maps each request identifier to its response's.
var responseIDs = map[string]string{"01": "24", "25": "26", "19": "20", "99": "98", "23": "24", "63": "64", "11": "12", "09": "10", "17": "18",
	"29": "30", "65": "66", "15": "16", "35": "36", "37": "38"}

// TestLoginThrottle: five failed logins for an account from one address lock it
// there for a while, even with the right password; other accounts are not affected.
func TestLoginThrottle(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		c := e.dial()
		if resp := send(t, c, sip.LoginMessage("kiosk", "wrong", "")); resp != "940" {
			t.Fatalf("failure %d: %q", i+1, resp)
		}
	}
	if err := e.dial().Login("kiosk", "kiosk", ""); !errors.Is(err, sip.ErrLoginRefused) {
		t.Errorf("the right password after five failures: %v, want refused", err)
	}
}

// TestPINThrottle: ten wrong PINs for a patron lock the patron's PIN for a while,
// on every terminal.
func TestPINThrottle(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	msg := func(pin string) string { return "23001" + sipNow + "AOCEN|AAP0001|AC|AD" + pin + "|" }
	for i := range 10 {
		if resp := send(t, c, msg("0000")); !strings.Contains(resp, "|CQN|") {
			t.Fatalf("wrong PIN %d: %s", i+1, resp)
		}
	}
	resp := send(t, e.client(), msg("1234"))
	if !strings.Contains(resp, "|CQN|") || !strings.Contains(resp, "Too many wrong PINs") {
		t.Errorf("the right PIN after ten wrong ones: %s", resp)
	}
	if resp := send(t, c, "23001"+sipNow+"AOCEN|AAP0003|AC|AD1234|"); !strings.Contains(resp, "|CQY|") {
		t.Errorf("another patron's PIN: %s", resp)
	}
}

// TestPanicRecovered: a panic while handling a message (here: a server without a
// database) closes that connection; the server goes on accepting.
func TestPanicRecovered(t *testing.T) {
	srv := sip.New(sip.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	e := &env{tb: t, srv: srv, addr: ln.Addr().String()}
	for range 2 {
		rc := e.raw()
		rc.write("9300CNkiosk|COkiosk|CPCEN|\r")
		if !rc.closed(5 * time.Second) {
			t.Fatal("the connection whose message panicked is still open")
		}
	}
}

// rawFrom connects from the local address ip (loopback is 127.0.0.0/8: 127.0.0.2
// is another client address on the same machine).
func (e *env) rawFrom(ip string) *rawConn {
	e.tb.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", e.addr)
	if err != nil {
		e.tb.Fatal(err)
	}
	e.tb.Cleanup(func() { c.Close() })
	return &rawConn{t: e.tb, c: c, r: bufio.NewReader(c)}
}

// TestConnectionsPerAddress: one address that opens
// MaxConnsPerAddr connections and sends nothing gets no more, while a terminal at
// another address connects, logs in and works; when one of the first closes, its
// address may connect again. Without the limit, 256 idle connections from one
// address refused every terminal.
func TestConnectionsPerAddress(t *testing.T) {
	const perAddr = 4
	e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{MaxConnsPerAddr: perAddr}})
	idle := make([]*rawConn, perAddr)
	for i := range idle {
		idle[i] = e.rawFrom("127.0.0.1")
	}
	// Connections are accepted in the order they were made: by now the server
	// has counted the idle ones.
	extra := e.rawFrom("127.0.0.1")
	if !extra.closed(3 * time.Second) {
		t.Fatalf("connection %d from 127.0.0.1 was served; want it refused", perAddr+1)
	}
	// The idle ones are still served.
	idle[0].write("9300CNkiosk|COkiosk|CPCEN|\r")
	if got := idle[0].read('\r'); got != "941\r" {
		t.Fatalf("an idle connection within the limit: %q", got)
	}
	other := e.rawFrom("127.0.0.2")
	other.write("9300CNkiosk|COkiosk|CPCEN|\r")
	if got := other.read('\r'); got != "941\r" {
		t.Fatalf("a terminal at 127.0.0.2: %q", got)
	}
	other.write("9900302.00\r")
	if got := other.read('\r'); !strings.HasPrefix(got, "98") {
		t.Fatalf("a terminal at 127.0.0.2, status: %q", got)
	}
	// A place freed is taken again.
	idle[1].c.Close()
	var again *rawConn
	waittest.For(t, "127.0.0.1 to connect again after one of its connections closed", func() bool {
		again = e.rawFrom("127.0.0.1")
		again.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := again.r.Peek(1)
		return errors.Is(err, os.ErrDeadlineExceeded) // open and waiting for a message: admitted
	})
	again.write("9300CNkiosk|COkiosk|CPCEN|\r")
	if got := again.read('\r'); got != "941\r" {
		t.Fatalf("the connection that took the freed place: %q", got)
	}
}

// TestLoginTimeout: a connection that does not log in is closed LoginTimeout
// after it opened, however busy it keeps: idle, repeating a resend request (97),
// or mixing unusable messages with 97; not the idle timeout (5 minutes), which
// 97 would renew for ever.
func TestLoginTimeout(t *testing.T) {
	const loginTimeout = time.Second
	e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{LoginTimeout: loginTimeout}})
	// closedWithin checks that rc is closed, not before loginTimeout (less a
	// margin for the clocks) after start, sending every and msgs in turn until
	// then (none when msgs is empty); it returns how many it sent.
	closedWithin := func(t *testing.T, rc *rawConn, start time.Time, every time.Duration, msgs ...string) (sent int) {
		t.Helper()
		for {
			if len(msgs) > 0 {
				if _, err := rc.c.Write([]byte(msgs[sent%len(msgs)] + "\r")); err != nil {
					break // closed
				}
				sent++
			}
			if rc.closed(max(every, 10*time.Millisecond)) {
				break
			}
			if time.Since(start) > waittest.Limit {
				t.Fatalf("still open after %v", time.Since(start))
			}
		}
		if d := time.Since(start); d < loginTimeout-50*time.Millisecond {
			t.Errorf("closed after %v, before the login timeout (%v)", d, loginTimeout)
		}
		return sent
	}
	t.Run("Idle", func(t *testing.T) {
		start := time.Now()
		closedWithin(t, e.raw(), start, 3*time.Second)
	})
	t.Run("ResendRepeated", func(t *testing.T) {
		// 97 before a login counts as a message without a login: the fifth closes
		// the connection. The login timeout is a minute here, so that only the
		// count can close it.
		e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{LoginTimeout: time.Minute}})
		rc := e.raw()
		for i := range 4 {
			rc.write("97\r")
			if got := rc.read('\r'); got != "96\r" {
				t.Fatalf("97 number %d: %q", i+1, got)
			}
		}
		rc.write("97\r")
		rc.read('\r')
		if !rc.closed(10 * time.Second) {
			t.Fatal("five resend requests without a login did not close the connection")
		}
	})
	t.Run("ResendAndGarbage", func(t *testing.T) {
		// Four unusable messages and a 97, over and over, one every 150 ms: neither
		// count reaches its limit for 25 messages; the login timeout closes it
		// first.
		start := time.Now()
		if n := closedWithin(t, e.raw(), start, 150*time.Millisecond, "XX", "XX", "XX", "XX", "97"); n >= 25 {
			t.Errorf("closed after %d messages: by a count, not the login timeout", n)
		}
	})
	t.Run("LoginInTime", func(t *testing.T) {
		// A terminal that logs in is held by the idle timeout (5 minutes), not this.
		rc := e.raw()
		rc.write("9300CNkiosk|COkiosk|CPCEN|\r")
		if got := rc.read('\r'); got != "941\r" {
			t.Fatalf("login: %q", got)
		}
		if rc.closed(2 * loginTimeout) {
			t.Fatal("a logged-in connection was closed by the login timeout")
		}
		rc.write("9900302.00\r")
		if got := rc.read('\r'); !strings.HasPrefix(got, "98") {
			t.Fatalf("status: %q", got)
		}
	})
	t.Run("FailedReLogin", func(t *testing.T) {
		// A failed login logs the connection out; it then has LoginTimeout again
		// from that moment, not from when it opened.
		rc := e.raw()
		rc.write("9300CNkiosk|COkiosk|CPCEN|\r")
		rc.read('\r')
		time.Sleep(loginTimeout + 100*time.Millisecond) // under test: past the first login's timeout
		start := time.Now()
		rc.write("9300CNkiosk|COwrong|CPCEN|\r")
		if got := rc.read('\r'); got != "940\r" {
			t.Fatalf("wrong password: %q", got)
		}
		closedWithin(t, rc, start, 3*time.Second)
	})
}

// TestPatronStatusCardLost: a card staff marked reported lost says so in the
// patron status (position 5 of 14, "card reported lost"), and only then.
func TestPatronStatusCardLost(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	status := func() string {
		t.Helper()
		resp := send(t, c, "23001"+sipNow+"AOCEN|AAP0001|AC|AD1234|")
		return resp[2:16]
	}
	if got := status(); got[4] != ' ' {
		t.Fatalf("patron status %q: card reported lost before it was", got)
	}
	err := e.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE patrons SET card_lost = 1 WHERE card = 'P0001'`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := status(); got[4] != 'Y' {
		t.Errorf("patron status %q, want card reported lost (Y at position 5)", got)
	}
}
