package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/fcgi"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/opac"
	"github.com/stacks-ils/stacks/web"
)

// runFCGI serves the staff site over FastCGI: a web server (lighttpd mod_fastcgi,
// Apache mod_fcgid or mod_proxy_fcgi, nginx) passes each request to this one
// long-running process, so a CGI-style installation gets the persistent server's
// speed. It listens on --listen, or, when the web server starts it with a
// listening socket as its standard input (mod_fcgid, lighttpd's bin-path), on that.
// Like CGI, it leaves the daily jobs and notices to cron (stacks daily), because a
// web server may start several of these processes.
func runFCGI(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fcgi", "fcgi [--listen unix:/run/stacks/stacks.sock | 127.0.0.1:9000] [flags]",
		"Serves the staff site over FastCGI (lighttpd mod_fastcgi, Apache mod_fcgid or\n"+
			"mod_proxy_fcgi). Without --listen it serves on its standard input, which must then be\n"+
			"a listening socket, as when the web server starts it. The database is created and\n"+
			"migrated if needed. Run stacks daily from cron for notices and the daily jobs.\n"+
			"See docs/deploy.md.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	listen := fs.String("listen", env("STACKS_FCGI_LISTEN", ""), "where to listen: unix:/path/to.sock or host:port (STACKS_FCGI_LISTEN); empty: the socket on standard input")
	socketMode := fs.String("socket-mode", env("STACKS_FCGI_SOCKET_MODE", "0660"), "permissions of a unix socket, in octal: the web server's user (or group) must be able to write it (STACKS_FCGI_SOCKET_MODE)")
	logLevel := fs.String("log-level", env("STACKS_LOG_LEVEL", "info"), "log level: debug, info, warn, error (STACKS_LOG_LEVEL)")
	logFormat := fs.String("log-format", env("STACKS_LOG_FORMAT", "text"), "log format: text or json (STACKS_LOG_FORMAT)")
	idle := fs.Duration("idle-timeout", envDuration("STACKS_IDLE_TIMEOUT", 30*time.Minute), "sign staff out after this long without a request (STACKS_IDLE_TIMEOUT)")
	secure := fs.Bool("secure-cookies", envBool("STACKS_SECURE_COOKIES"), "mark the staff session cookie Secure (also when the web server passes HTTPS=on) (STACKS_SECURE_COOKIES)")
	searchTimeout := fs.Duration("search-timeout", envDuration("STACKS_SEARCH_TIMEOUT", web.DefaultSearchTimeout),
		"stop a catalogue search after this long and ask staff to narrow it (STACKS_SEARCH_TIMEOUT)")
	trustedProxy := fs.String("trusted-proxy", env("STACKS_FCGI_TRUSTED_PROXY", defaultFCGITrusted),
		"comma-separated addresses or CIDRs of the web servers whose REMOTE_ADDR is believed, and \"unix\" for any peer on a unix socket; a request from any other peer is seen as from the peer's own address (STACKS_FCGI_TRUSTED_PROXY)")
	basePathFlag := fs.String("base-path", env("STACKS_BASE_PATH", ""),
		"the path the web server mounts Stacks at, e.g. /cgi-bin/stacks or /library: Go's FastCGI server does not pass SCRIPT_NAME on, so say it here; other paths answer 404 (STACKS_BASE_PATH)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("fcgi takes no arguments, got %q", fs.Args())}
	}
	base, err := basepath.Clean(*basePathFlag)
	if err != nil {
		return usageError{"--base-path: " + err.Error()}
	}
	peers, err := parseFCGIPeers(*trustedProxy)
	if err != nil {
		return usageError{"--trusted-proxy: " + err.Error()}
	}
	logger, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	mode, err := strconv.ParseUint(*socketMode, 8, 32)
	if err != nil || mode > 0o777 {
		return usageError{fmt.Sprintf("--socket-mode %q: give permissions in octal, e.g. 0660", *socketMode)}
	}
	ln, err := fcgiListener(*listen, os.FileMode(mode))
	if err != nil {
		return err
	}
	defer ln.Close()
	tuneGC()
	if err := checkTempDir(); err != nil {
		return err
	}
	d, err := dbf.openLibrary(ctx, logger)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := warnNoStaff(ctx, d, dbf.path, logger); err != nil {
		return err
	}
	setUpReports(ctx, d, dbf.path, logger)

	// A patron load with many PINs runs on after its request; it stops, and is
	// waited for, before the database closes.
	jobs, stopJobs := context.WithCancel(context.Background())
	srv := web.New(web.Config{
		DB:               d,
		Logger:           logger,
		IdleTimeout:      *idle,
		SecureCookies:    *secure,
		CachePreferences: true,
		Preferences:      library.NewPreferenceCache(true),
		SearchTimeout:    *searchTimeout,
		Background:       jobs,
	})
	defer func() { stopJobs(); srv.Wait() }()
	handler := &inFlight{h: basepath.Mount(base, srv)}
	bg, stopBG := context.WithCancel(context.Background())
	// The sweeper stops before the database closes (a write racing the
	// close is a send on the closed group-commit queue: TestFCGI/Unix under -race).
	cleaned := make(chan struct{})
	go func() { sweepExpired(bg, d, logger); close(cleaned) }()
	defer func() { stopBG(); <-cleaned }()

	logger.Info("serving FastCGI", "listen", ln.Addr().Network()+":"+ln.Addr().String(), "base", base+"/", "db", db.DisplayName(dbf.path))
	errc := make(chan error, 1)
	go func() { errc <- serveFCGI(ln, handler, peers) }()
	select {
	case err := <-errc:
		return fmt.Errorf("fastcgi: %w", err)
	case <-ctx.Done():
	}
	// net/http/fcgi has no Shutdown: stop accepting, then let the requests in
	// progress finish (the web server keeps their connections open) before the
	// database closes.
	logger.Info("shutting down: finishing requests in progress")
	ln.Close()
	<-errc
	if !handler.wait(20 * time.Second) {
		logger.Warn("stopped with requests still in progress after 20s")
	}
	logger.Info("stopped")
	return nil
}

// fcgiListener listens where --listen says: "unix:/path" (a stale socket file left
// by a killed server is replaced), "host:port", or, when empty, the listening
// socket the web server passed as standard input.
func fcgiListener(listen string, mode os.FileMode) (net.Listener, error) {
	if listen == "" {
		ln, err := net.FileListener(os.Stdin)
		if err != nil {
			return nil, usageError{"stacks fcgi: standard input is not a listening socket (the web server did not start it); give --listen unix:/run/stacks/stacks.sock or --listen 127.0.0.1:9000"}
		}
		return ln, nil
	}
	if path, ok := strings.CutPrefix(listen, "unix:"); ok {
		if path == "" {
			return nil, usageError{"--listen unix: needs a path, e.g. unix:/run/stacks/stacks.sock"}
		}
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			if c, err := net.Dial("unix", path); err == nil {
				c.Close()
				return nil, fmt.Errorf("listen on %s: another server is answering there", listen)
			}
			if err := os.Remove(path); err != nil {
				return nil, fmt.Errorf("remove the stale socket %s: %w", path, err)
			}
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", listen, err)
		}
		if err := os.Chmod(path, mode); err != nil {
			ln.Close()
			return nil, fmt.Errorf("set the permissions of %s: %w", path, err)
		}
		return ln, nil
	}
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return nil, usageError{fmt.Sprintf("--listen %q: use unix:/path/to.sock or host:port, e.g. 127.0.0.1:9000", listen)}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (is another server running there?)", listen, err)
	}
	return ln, nil
}

// defaultFCGITrusted is --trusted-proxy's default: a web server on this
// machine, over loopback or a unix socket.
const defaultFCGITrusted = "127.0.0.0/8,::1,unix"

// fcgiPeers are the peers whose FastCGI parameters say who the client is
// (REMOTE_ADDR). FastCGI has no authentication: whoever can connect can claim
// any REMOTE_ADDR, and the sign-in throttles and the audit would then count a
// guesser under an address of its choosing.
type fcgiPeers struct {
	// unix: any peer on a unix socket (the socket's mode says who may connect).
	unix     bool
	prefixes []netip.Prefix
}

// parseFCGIPeers reads --trusted-proxy: addresses, CIDRs and "unix".
func parseFCGIPeers(list string) (fcgiPeers, error) {
	var p fcgiPeers
	var addrs []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); strings.EqualFold(f, "unix") {
			p.unix = true
		} else if f != "" {
			addrs = append(addrs, f)
		}
	}
	prefixes, err := opac.ParseTrustedProxies(strings.Join(addrs, ","))
	if err != nil {
		return p, fmt.Errorf("%w, or unix", err)
	}
	p.prefixes = prefixes
	return p, nil
}

// trusts reports whether the peer of a FastCGI connection may say who the
// client is.
func (p fcgiPeers) trusts(peer net.Addr) bool {
	switch a := peer.(type) {
	case *net.UnixAddr:
		return p.unix
	case *net.TCPAddr:
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			return false
		}
		ip = ip.Unmap()
		for _, pr := range p.prefixes {
			if pr.Contains(ip) {
				return true
			}
		}
	}
	return false
}

// peerAddr is the address a request from an untrusted peer is seen as from.
func peerAddr(peer net.Addr) string {
	if u, ok := peer.(*net.UnixAddr); ok {
		// Unix peers are mostly unnamed; they are one local client.
		if u.Name == "" || u.Name == "@" {
			return "unix"
		}
		return "unix:" + u.Name
	}
	return peer.String()
}

// serveFCGI serves each FastCGI connection ln accepts with h, which sees the
// client's address as REMOTE_ADDR says when the peer is trusted, else as the
// peer's own address. net/http/fcgi does not tell a handler which connection a
// request came on, so each connection is served on its own.
func serveFCGI(ln net.Listener, h http.Handler, peers fcgiPeers) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		// Serve returns once the connection is handed to its own goroutine
		// (the second Accept fails); the connection is served until it closes.
		fcgi.Serve(&oneConn{c: c}, peers.handler(h, c.RemoteAddr()))
	}
}

// handler is h for requests on a connection from peer.
func (p fcgiPeers) handler(h http.Handler, peer net.Addr) http.Handler {
	own := peerAddr(peer)
	trusted := p.trusts(peer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !trusted || r.RemoteAddr == "" {
			r.RemoteAddr = own
		}
		h.ServeHTTP(w, r)
	})
}

// oneConn is a listener that accepts one connection, already accepted.
type oneConn struct {
	c    net.Conn
	done bool
}

func (l *oneConn) Accept() (net.Conn, error) {
	if l.done {
		return nil, net.ErrClosed
	}
	l.done = true
	return l.c, nil
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.c.LocalAddr() }

// inFlight counts the requests being served, so that a stop can wait for them.
// Once stopping, it answers 503: a web server keeps its FastCGI connections open
// and may still send requests on them after the listener has closed.
type inFlight struct {
	h        http.Handler
	mu       sync.Mutex
	n        int
	stopping bool
}

func (f *inFlight) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.stopping {
		f.mu.Unlock()
		w.Header().Set("Retry-After", "5")
		http.Error(w, "Stacks is restarting; try again in a few seconds.", http.StatusServiceUnavailable)
		return
	}
	f.n++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.n--
		f.mu.Unlock()
	}()
	f.h.ServeHTTP(w, r)
}

// wait refuses new requests and waits for those in progress, at most timeout;
// false if some are still running.
func (f *inFlight) wait(timeout time.Duration) bool {
	f.mu.Lock()
	f.stopping = true
	f.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for {
		f.mu.Lock()
		n := f.n
		f.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
