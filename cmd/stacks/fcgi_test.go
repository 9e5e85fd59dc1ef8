package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/stackstest"
	"github.com/stacks-ils/stacks/waittest"
)

// TestFCGI: stacks fcgi serves the staff site to a FastCGI client (the test speaks
// the protocol itself, as lighttpd or Apache would): /healthz, the login page, a
// sign-in whose session cookie then opens the desk, on TCP and on a unix socket;
// it stops cleanly when its context ends (SIGTERM).
func TestFCGI(t *testing.T) {
	path := newDemoDB(t)
	t.Setenv("STACKS_FCGI_LISTEN", "")

	t.Run("TCP", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		stop := startFCGI(t, "tcp", addr, "--listen", addr, "--db", path)

		resp := fcgiDo(t, "tcp", addr, "GET", "/healthz", nil, "")
		if resp.status != http.StatusOK {
			t.Fatalf("GET /healthz: %d\n%s", resp.status, resp.body)
		}
		resp = fcgiDo(t, "tcp", addr, "GET", "/login", nil, "")
		if resp.status != http.StatusOK || !strings.Contains(resp.body, "Log in") {
			t.Fatalf("GET /login: %d, want 200 with a Log in button\n%s", resp.status, resp.body)
		}
		form := url.Values{"username": {"desk"}, "password": {"desk"}}.Encode()
		resp = fcgiDo(t, "tcp", addr, "POST", "/login", nil, form)
		if resp.status != http.StatusSeeOther {
			t.Fatalf("POST /login as desk: %d, want 303\n%s", resp.status, resp.body)
		}
		cookies := (&http.Response{Header: resp.header}).Cookies()
		if len(cookies) == 0 {
			t.Fatalf("POST /login as desk: no session cookie (headers %v)", resp.header)
		}
		resp = fcgiDo(t, "tcp", addr, "GET", "/checkout", cookies, "")
		if resp.status != http.StatusOK || !strings.Contains(resp.body, "Log out") || !strings.Contains(resp.body, "Card number") {
			t.Fatalf("GET /checkout with the session cookie: %d, want 200 with Log out and Card number\n%s", resp.status, resp.body)
		}
		// Without the cookie the desk sends the visitor to sign in.
		if resp := fcgiDo(t, "tcp", addr, "GET", "/checkout", nil, ""); resp.status != http.StatusSeeOther {
			t.Errorf("GET /checkout without a session: %d, want 303 to the login page", resp.status)
		}
		if err := stop(); err != nil {
			t.Errorf("stacks fcgi after its context ended: %v, want a clean stop", err)
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("still listening on %s after stopping", addr)
		}
	})

	t.Run("Unix", func(t *testing.T) {
		// A short directory: a unix socket's path has a length limit.
		dir, err := os.MkdirTemp("", "fcgi")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		sock := filepath.Join(dir, "s.sock")
		// A stale socket file from a killed server is replaced.
		stale, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		stale.(*net.UnixListener).SetUnlinkOnClose(false)
		stale.Close()
		stop := startFCGI(t, "unix", sock, "--listen", "unix:"+sock, "--db", path)
		if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o660 {
			t.Errorf("socket %s: %v, mode %v, want 0660", sock, err, fi.Mode().Perm())
		}
		if resp := fcgiDo(t, "unix", sock, "GET", "/healthz", nil, ""); resp.status != http.StatusOK {
			t.Errorf("GET /healthz over %s: %d", sock, resp.status)
		}
		if err := stop(); err != nil {
			t.Errorf("stacks fcgi after its context ended: %v", err)
		}
	})

	t.Run("BasePath", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		const base = "/cgi-bin/stacks"
		startFCGI(t, "tcp", addr, "--listen", addr, "--db", path, "--base-path", base)

		resp := fcgiDoAt(t, "tcp", addr, base, "GET", "/checkout", nil, "")
		if resp.status != http.StatusSeeOther || resp.header.Get("Location") != base+"/login?next=%2Fcheckout" {
			t.Fatalf("GET %s/checkout signed out: %d to %q, want 303 to %s/login?next=%%2Fcheckout", base, resp.status, resp.header.Get("Location"), base)
		}
		resp = fcgiDoAt(t, "tcp", addr, base, "GET", "/login", nil, "")
		if resp.status != http.StatusOK || !strings.Contains(resp.body, `action="`+base+`/login"`) {
			t.Fatalf("GET %s/login: %d; the form must post to %s/login\n%s", base, resp.status, base, resp.body)
		}
		i := strings.Index(resp.body, base+"/static/stacks.css?v=")
		if i < 0 {
			t.Fatalf("the login page's stylesheet is not under %s/static/", base)
		}
		css := resp.body[i+len(base) : i+strings.IndexByte(resp.body[i:], '"')]
		if r := fcgiDoAt(t, "tcp", addr, base, "GET", css, nil, ""); r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") {
			t.Errorf("GET %s%s: %d %s, want the stylesheet", base, css, r.status, r.header.Get("Content-Type"))
		}
		form := url.Values{"username": {"desk"}, "password": {"desk"}, "next": {"/checkout"}}.Encode()
		resp = fcgiDoAt(t, "tcp", addr, base, "POST", "/login", nil, form)
		if resp.status != http.StatusSeeOther || resp.header.Get("Location") != base+"/checkout" {
			t.Fatalf("POST %s/login: %d to %q, want 303 to %s/checkout", base, resp.status, resp.header.Get("Location"), base)
		}
		cookies := (&http.Response{Header: resp.header}).Cookies()
		if len(cookies) == 0 {
			t.Fatal("POST /login set no cookie")
		}
		for _, ck := range cookies {
			if ck.Path != base+"/" {
				t.Errorf("cookie %s: Path %q, want %s/", ck.Name, ck.Path, base)
			}
		}
		resp = fcgiDoAt(t, "tcp", addr, base, "GET", "/checkout", cookies, "")
		if resp.status != http.StatusOK || !strings.Contains(resp.body, `data-scan-url="`+base+`/checkout/scan"`) {
			t.Fatalf("GET %s/checkout signed in: %d, want the desk with its scan URL under the base\n%s", base, resp.status, resp.body)
		}
		if resp.header.Get("Server-Timing") == "" {
			t.Errorf("GET %s/checkout: no Server-Timing", base)
		}
		// Behind a web server that terminates TLS and says so (HTTPS=on, as
		// lighttpd and Apache's mod_proxy_fcgi pass it), the session cookie is
		// Secure though stacks fcgi was not started with --secure-cookies; over
		// plain HTTP (above) it is not.
		for _, ck := range cookies {
			if ck.Secure {
				t.Errorf("cookie %s over plain HTTP is Secure: the browser would not send it back", ck.Name)
			}
		}
		https := [][2]string{{"HTTPS", "on"}, {"SERVER_PORT", "443"}}
		resp = fcgiDoEnv(t, "tcp", addr, base, "POST", "/login", nil, form, https)
		if resp.status != http.StatusSeeOther {
			t.Fatalf("POST %s/login over HTTPS: %d, want 303", base, resp.status)
		}
		secure := (&http.Response{Header: resp.header}).Cookies()
		if len(secure) == 0 {
			t.Fatal("POST /login over HTTPS set no cookie")
		}
		for _, ck := range secure {
			if !ck.Secure || ck.Path != base+"/" {
				t.Errorf("cookie %s over HTTPS: Secure %v, Path %q; want Secure under %s/", ck.Name, ck.Secure, ck.Path, base)
			}
		}
		// A request outside the mount is not served.
		if r := fcgiDoAt(t, "tcp", addr, "", "GET", "/checkout", cookies, ""); r.status != http.StatusNotFound {
			t.Errorf("GET /checkout outside %s: %d, want 404", base, r.status)
		}
	})

	t.Run("Refusals", func(t *testing.T) {
		for _, args := range [][]string{
			{"fcgi", "--db", path, "--listen", "127.0.0.1:0", "--base-path", "library"},
			{"fcgi", "--db", path, "--listen", "127.0.0.1:0", "--base-path", "/a/../b"},
			{"serve", "--db", path, "--addr", "127.0.0.1:0", "--base-path", "/library?x"},
			{"serve", "--db", path, "--addr", "127.0.0.1:0", "--opac-base-path", "catalogue"},
			{"fcgi", "--db", path, "--listen", "nonsense"},
			{"fcgi", "--db", path, "--listen", "unix:"},
			{"fcgi", "--db", path, "--listen", "127.0.0.1:0", "--socket-mode", "rw"},
			// Standard input is not a socket under go test.
			{"fcgi", "--db", path},
		} {
			var out bytes.Buffer
			if err := run(context.Background(), args, &out, &out); exitCode(err) != 2 {
				t.Errorf("%q: %v, want a usage error", args, err)
			}
		}
	})
}

// startFCGI runs stacks fcgi with args until the returned stop is called, which
// ends its context (as SIGTERM does) and returns run's error.
func startFCGI(t *testing.T, network, addr string, args ...string) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var logs stackstest.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"fcgi", "--log-level", "warn"}, args...), &logs, &logs) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return fmt.Errorf("did not stop within 30s")
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("--- stacks fcgi output ---\n%s", logs.String())
		}
	})
	waittest.For(t, fmt.Sprintf("stacks fcgi %q to listen on %s", args, addr), func() bool {
		c, err := net.DialTimeout(network, addr, time.Second)
		if err == nil {
			c.Close()
			return true
		}
		select {
		case err := <-done:
			t.Fatalf("stacks fcgi %q exited: %v\n%s", args, err, logs.String())
		default:
		}
		return false
	})
	return stop
}

// fcgiResponse is a FastCGI responder's answer, parsed as CGI output.
type fcgiResponse struct {
	status int
	header http.Header
	body   string
}

// The FastCGI record types and the responder role (FastCGI 1.0 specification).
const (
	fcgiBeginRequest = 1
	fcgiEndRequest   = 3
	fcgiParams       = 4
	fcgiStdin        = 5
	fcgiStdout       = 6
	fcgiStderr       = 7
	fcgiResponder    = 1
)

// fcgiDo sends one request as a web server would (BEGIN_REQUEST, PARAMS, STDIN on
// a new connection) and reads the STDOUT records up to END_REQUEST.
func fcgiDo(t *testing.T, network, addr, method, target string, cookies []*http.Cookie, body string) fcgiResponse {
	t.Helper()
	return fcgiDoAt(t, network, addr, "", method, target, cookies, body)
}

// fcgiDoAt is fcgiDo for a site the web server mounts at scriptName
// (/cgi-bin/stacks): target is the path under it, sent as PATH_INFO, and
// REQUEST_URI is the whole path, as lighttpd and Apache send them.
func fcgiDoAt(t *testing.T, network, addr, scriptName, method, target string, cookies []*http.Cookie, body string) fcgiResponse {
	t.Helper()
	return fcgiDoEnv(t, network, addr, scriptName, method, target, cookies, body, nil)
}

// fcgiDoEnv is fcgiDoAt with more parameters from the web server (HTTPS=on).
func fcgiDoEnv(t *testing.T, network, addr, scriptName, method, target string, cookies []*http.Cookie, body string, extra [][2]string) fcgiResponse {
	t.Helper()
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	path, query, _ := strings.Cut(target, "?")
	params := [][2]string{
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SERVER_SOFTWARE", "stacks-test"},
		{"SERVER_PROTOCOL", "HTTP/1.1"},
		{"SERVER_NAME", "127.0.0.1"},
		{"SERVER_PORT", "80"},
		{"REMOTE_ADDR", "127.0.0.1"},
		{"REMOTE_PORT", "50000"},
		{"REQUEST_METHOD", method},
		{"SCRIPT_NAME", scriptName},
		{"PATH_INFO", path},
		{"REQUEST_URI", scriptName + target},
		{"QUERY_STRING", query},
		{"HTTP_HOST", "127.0.0.1"},
		{"CONTENT_LENGTH", strconv.Itoa(len(body))},
	}
	if body != "" {
		params = append(params, [2]string{"CONTENT_TYPE", "application/x-www-form-urlencoded"})
	}
	params = append(params, extra...)
	if len(cookies) > 0 {
		var cs []string
		for _, ck := range cookies {
			cs = append(cs, ck.Name+"="+ck.Value)
		}
		params = append(params, [2]string{"HTTP_COOKIE", strings.Join(cs, "; ")})
	}
	const id = 1
	var out bytes.Buffer
	writeRecord(&out, fcgiBeginRequest, id, []byte{0, fcgiResponder, 0, 0, 0, 0, 0, 0})
	var p bytes.Buffer
	for _, kv := range params {
		writeLength(&p, len(kv[0]))
		writeLength(&p, len(kv[1]))
		p.WriteString(kv[0])
		p.WriteString(kv[1])
	}
	writeRecord(&out, fcgiParams, id, p.Bytes())
	writeRecord(&out, fcgiParams, id, nil)
	if body != "" {
		writeRecord(&out, fcgiStdin, id, []byte(body))
	}
	writeRecord(&out, fcgiStdin, id, nil)
	if _, err := c.Write(out.Bytes()); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	r := bufio.NewReader(c)
	for ended := false; !ended; {
		var h [8]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			t.Fatalf("%s %s: reading a FastCGI record header: %v", method, target, err)
		}
		content := make([]byte, binary.BigEndian.Uint16(h[4:6]))
		if _, err := io.ReadFull(r, content); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Discard(int(h[6])); err != nil {
			t.Fatal(err)
		}
		switch h[1] {
		case fcgiStdout:
			stdout.Write(content)
		case fcgiStderr:
			stderr.Write(content)
		case fcgiEndRequest:
			ended = true
		}
	}
	if stderr.Len() > 0 {
		t.Logf("%s %s: FastCGI stderr: %s", method, target, stderr.String())
	}

	tp := textproto.NewReader(bufio.NewReader(&stdout))
	mh, err := tp.ReadMIMEHeader()
	if err != nil {
		t.Fatalf("%s %s: the answer's headers: %v\n%s", method, target, err, stdout.String())
	}
	resp := fcgiResponse{status: http.StatusOK, header: http.Header(mh)}
	if s := resp.header.Get("Status"); s != "" {
		code, _, _ := strings.Cut(s, " ")
		if resp.status, err = strconv.Atoi(code); err != nil {
			t.Fatalf("%s %s: Status %q", method, target, s)
		}
	}
	b, _ := io.ReadAll(tp.R)
	resp.body = string(b)
	return resp
}

func writeRecord(w *bytes.Buffer, typ byte, id uint16, content []byte) {
	w.Write([]byte{1, typ, byte(id >> 8), byte(id), byte(len(content) >> 8), byte(len(content)), 0, 0})
	w.Write(content)
}

// writeLength writes a name-value pair's length: one byte below 128, else four
// with the top bit set.
func writeLength(w *bytes.Buffer, n int) {
	if n < 128 {
		w.WriteByte(byte(n))
		return
	}
	w.Write([]byte{byte(n>>24) | 0x80, byte(n >> 16), byte(n >> 8), byte(n)})
}

// TestFCGIStopWaits: on SIGTERM stacks fcgi waits for a request in progress, and
// answers 503 to one that arrives meanwhile on a connection the web server kept
// open, instead of running it against a database about to close.
func TestFCGIStopWaits(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	f := &inFlight{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-release
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	slow := httptest.NewRecorder()
	go f.ServeHTTP(slow, httptest.NewRequest("GET", "/slow", nil))
	<-started
	waited := make(chan bool)
	go func() { waited <- f.wait(10 * time.Second) }()
	// wait marks the stop before it polls: a request answered 503 shows it has.
	waittest.For(t, "a request during the stop to be answered 503", func() bool {
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, httptest.NewRequest("GET", "/late", nil))
		return rec.Code == http.StatusServiceUnavailable
	})
	select {
	case <-waited:
		t.Fatal("the stop did not wait for the request in progress")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if ok := <-waited; !ok {
		t.Error("wait reported requests still running after the last one finished")
	}
}

// TestFCGITrustedProxy: REMOTE_ADDR is believed only from the peers
// --trusted-proxy names. A peer that is not one of them and claims to be
// passing on a request from 203.0.113.9 is seen as itself: its sign-in is
// audited, and throttled, under the peer's own address.
func TestFCGITrustedProxy(t *testing.T) {
	path := newDemoDB(t)
	t.Setenv("STACKS_FCGI_LISTEN", "")
	t.Setenv("STACKS_FCGI_TRUSTED_PROXY", "")
	claim := [][2]string{{"REMOTE_ADDR", "203.0.113.9"}}
	form := url.Values{"username": {"desk"}, "password": {"desk"}}.Encode()
	// lastLogin is the address of the latest staff.login in the audit.
	lastLogin := func(t *testing.T) string {
		t.Helper()
		sqlDB, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer sqlDB.Close()
		var detail string
		if err := sqlDB.QueryRow(`SELECT detail FROM audit_log WHERE action = 'staff.login' ORDER BY id DESC LIMIT 1`).Scan(&detail); err != nil {
			t.Fatal(err)
		}
		from, _, _ := strings.Cut(strings.TrimPrefix(detail, "from "), " at ")
		return from
	}
	for _, tc := range []struct {
		name string
		args []string
		unix bool
		want string
	}{
		// The web server on this machine (the default list) is believed.
		{"LoopbackTrustedByDefault", nil, false, "203.0.113.9"},
		{"UnixTrustedByDefault", nil, true, "203.0.113.9"},
		// A peer not on the list is seen as itself.
		{"Untrusted", []string{"--trusted-proxy", "192.0.2.1"}, false, "127.0.0.1"},
		{"UntrustedUnix", []string{"--trusted-proxy", "127.0.0.1"}, true, "unix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			network, addr, listen := "tcp", "", ""
			if tc.unix {
				dir, err := os.MkdirTemp("", "fcgi")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(dir) })
				network, addr = "unix", filepath.Join(dir, "s.sock")
				listen = "unix:" + addr
			} else {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr = l.Addr().String()
				l.Close()
				listen = addr
			}
			stop := startFCGI(t, network, addr, append([]string{"--listen", listen, "--db", path}, tc.args...)...)
			resp := fcgiDoEnv(t, network, addr, "", "POST", "/login", nil, form, claim)
			if resp.status != http.StatusSeeOther {
				t.Fatalf("POST /login: %d, want 303\n%s", resp.status, resp.body)
			}
			if got := lastLogin(t); got != tc.want {
				t.Errorf("sign-in audited from %q, want %q", got, tc.want)
			}
			if err := stop(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("Refused", func(t *testing.T) {
		var out bytes.Buffer
		args := []string{"fcgi", "--db", path, "--listen", "127.0.0.1:0", "--trusted-proxy", "127.0.0.1,nginx"}
		if err := run(context.Background(), args, &out, &out); exitCode(err) != 2 || !strings.Contains(err.Error(), `"nginx"`) {
			t.Errorf("%q: %v, want a usage error naming nginx", args, err)
		}
	})
}
