package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/fcgi"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
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
	d, err := dbf.open(ctx, logger)
	if err != nil {
		return err
	}
	defer d.Close()

	handler := &inFlight{h: basepath.Mount(base, web.New(web.Config{
		DB:               d,
		Logger:           logger,
		IdleTimeout:      *idle,
		SecureCookies:    *secure,
		CachePreferences: true,
		Preferences:      library.NewPreferenceCache(true),
		SearchTimeout:    *searchTimeout,
	}))}
	bg, stopBG := context.WithCancel(context.Background())
	// The session cleaner stops before the database closes (a write racing the
	// close is a send on the closed group-commit queue: TestFCGI/Unix under -race).
	cleaned := make(chan struct{})
	go func() { cleanSessions(bg, d, logger); close(cleaned) }()
	defer func() { stopBG(); <-cleaned }()

	logger.Info("serving FastCGI", "listen", ln.Addr().Network()+":"+ln.Addr().String(), "base", base+"/", "db", db.DisplayName(dbf.path))
	errc := make(chan error, 1)
	go func() { errc <- fcgi.Serve(ln, handler) }()
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
