package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cgi"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/web"
)

// runCGI serves exactly one request as a CGI program, with the same handlers as the
// server. Nothing survives the request in memory: sessions, the throttle, the desk's
// lists all live in the database. Start-up does one query to check the schema and
// nothing else; preferences are read once for the request.
func runCGI(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cgi", "cgi",
		"Serves one request as a CGI program (Apache ScriptAlias, lighttpd mod_cgi, ...).\n"+
			"It runs by itself when started with GATEWAY_INTERFACE set, as web servers do;\n"+
			"configure it with environment variables: STACKS_DB (required), STACKS_SYNCHRONOUS,\n"+
			"STACKS_IDLE_TIMEOUT, STACKS_LOG_LEVEL, STACKS_SECURE_COOKIES, STACKS_BASE_PATH. Mounted at a\n"+
			"sub-path (/cgi-bin/stacks), its links are under SCRIPT_NAME, or under STACKS_BASE_PATH\n"+
			"when a rewrite publishes it elsewhere (/library). See docs/deploy.md.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	logLevel := fs.String("log-level", env("STACKS_LOG_LEVEL", "warn"), "log level (STACKS_LOG_LEVEL)")
	idle := fs.Duration("idle-timeout", envDuration("STACKS_IDLE_TIMEOUT", 30*time.Minute), "idle sign-out (STACKS_IDLE_TIMEOUT)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if os.Getenv("REQUEST_METHOD") == "" {
		return usageError{"stacks cgi serves one request from a web server: REQUEST_METHOD is not set (to serve HTTP yourself, use stacks serve)"}
	}
	base, err := cgiBase(os.Getenv("STACKS_BASE_PATH"), os.Getenv("SCRIPT_NAME"))
	if err != nil {
		return err
	}
	logger, err := newLogger(stderr, *logLevel, "text")
	if err != nil {
		return err
	}
	// A web server's request never creates a library: a wrong STACKS_DB in its
	// configuration is said in its error log.
	if err := requireFile(dbf.path); err != nil {
		return err
	}
	// One request: no group-commit writer to start, one read connection.
	d, err := db.Open(dbf.path, db.Options{ReadConns: 1, Synchronous: dbf.synchronous, CommitEach: true, ExistingFile: true})
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.Migrate(ctx); err != nil {
		return fmt.Errorf("check the schema of %s: %w", db.DisplayName(dbf.path), err)
	}
	// The role SQL reports run as is named here; the first report a process
	// runs sets it up (a CGI process lives for one request).
	reportsRoleFromEnv()
	srv := web.New(web.Config{
		DB:            d,
		Logger:        logger,
		IdleTimeout:   *idle,
		SecureCookies: envBool("STACKS_SECURE_COOKIES") || os.Getenv("HTTPS") == "on",
		// Each process serves one request: nothing to cache.
		CachePreferences: false,
		SearchTimeout:    envDuration("STACKS_SEARCH_TIMEOUT", web.DefaultSearchTimeout),
		// The process ends with its request: nothing may run on after it.
		NoBackground: true,
	})
	return cgi.Serve(basepath.CGI(base, os.Getenv("PATH_INFO"), srv))
}

// cgiBase is a CGI request's base path: STACKS_BASE_PATH if set (a rewrite
// publishes the script somewhere other than where it lives: /library for
// /cgi-bin/stacks), else the SCRIPT_NAME the web server gives.
func cgiBase(override, scriptName string) (string, error) {
	if override != "" {
		base, err := basepath.Clean(override)
		if err != nil {
			return "", usageError{"STACKS_BASE_PATH: " + err.Error()}
		}
		return base, nil
	}
	base, err := basepath.Clean(scriptName)
	if err != nil {
		return "", fmt.Errorf("the web server's SCRIPT_NAME: %w; set STACKS_BASE_PATH to the path the site is published at", err)
	}
	return base, nil
}

// cgiHost returns a handler that runs this binary as a CGI program once per request,
// as Apache would, so that both modes can be timed side by side on one machine.
func cgiHost(dbf dbFlags, base string, idle time.Duration, logLevel string, stderr io.Writer) (http.Handler, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this program to run as CGI: %w", err)
	}
	path := dbf.path
	if !db.IsPostgresURL(path) {
		if path, err = filepath.Abs(path); err != nil {
			return nil, err
		}
	}
	return &cgi.Handler{
		Path: exe,
		Root: base,
		Args: []string{"cgi"},
		Env: []string{
			"STACKS_DB=" + path,
			"STACKS_SYNCHRONOUS=" + dbf.synchronous,
			"STACKS_IDLE_TIMEOUT=" + idle.String(),
			"STACKS_LOG_LEVEL=" + logLevel,
			"STACKS_READ_CONNS=" + strconv.Itoa(1),
		},
		Stderr: stderr,
		Logger: log.New(stderr, "cgi host: ", 0),
	}, nil
}
