package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/stackstest"
)

const (
	// chromiumPath is Debian's Chromium, installed by scripts/test-deps.sh.
	chromiumPath = "/usr/bin/chromium"

	// startTimeout bounds how long a server may take to answer /healthz,
	// including creating and filling the demo database on a slow, shared
	// machine.
	startTimeout = 60 * time.Second

	// stopTimeout is how long a server gets to exit after SIGTERM before it is
	// killed.
	stopTimeout = 10 * time.Second

	// uiTimeout (ms) bounds every browser action and assertion.
	uiTimeout = 10_000

	// fixHint tells whoever reads a failure how to get the browser tests'
	// dependencies.
	fixHint = "run `make test` (or scripts/test-deps.sh) to install Chromium and the Playwright driver"
)

// stacksBin is the binary under test, built once by TestMain.
var stacksBin string

// srcRoot is the module's directory, which TestMain built stacksBin from.
var srcRoot string

// recordInputs lets go test's cache see what the servers are built from: the
// module's sources of ./cmd/stacks, or the binary STACKS_E2E_BIN names. (go test
// records the files and variables the tests read while they run, not what
// TestMain read before.)
func recordInputs(t testing.TB) {
	t.Helper()
	if bin := os.Getenv("STACKS_E2E_BIN"); bin != "" {
		f, err := os.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		return
	}
	stackstest.Record(t, srcRoot)
}

// expect holds assertions that retry until uiTimeout.
var expect = playwright.NewPlaywrightAssertions(uiTimeout)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// STACKS_E2E_BIN runs the suite against a binary built elsewhere, such as
	// the one from the container image.
	dir, err := os.MkdirTemp("", "stacks-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	defer func() {
		if err := pgtest.Cleanup(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
		}
	}()
	demoTemplate.dir = dir
	defer func() {
		if err := stopBrowser(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
		}
	}()
	if bin := os.Getenv("STACKS_E2E_BIN"); bin != "" {
		stacksBin = bin
		return m.Run()
	}

	if stacksBin, srcRoot, err = stackstest.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return m.Run()
}

// server is a running stacks process with its own fresh demo database.
type server struct {
	// BaseURL is the root of the server, without a trailing slash, like
	// "http://127.0.0.1:41234".
	BaseURL string
	// Dir is the server's private temporary directory (holding its database
	// on SQLite).
	Dir string
	// DB is the server's database: the file's path, or on PostgreSQL
	// (STACKS_TEST_ENGINES=postgres) its URL, as given to --db.
	DB string

	out *stackstest.Buffer
}

// Output returns what the server wrote to stdout and stderr so far.
func (s *server) Output() string { return s.out.String() }

// startServer starts `stacks serve --demo` on a free port with a fresh copy
// of the demo library (copyDemo) and waits until it answers /healthz. The process is stopped when
// the test ends; its output is logged if the test failed.
func startServer(t testing.TB, extraArgs ...string) *server {
	t.Helper()
	return startServerAt(t, "", extraArgs...)
}

// startServerAt is startServer with stacks serve --base-path base: the
// server's BaseURL then ends with the base, so that BaseURL + "/checkout" is
// the desk under it.
func startServerAt(t testing.TB, base string, extraArgs ...string) *server {
	t.Helper()
	if base != "" {
		extraArgs = append([]string{"--base-path", base}, extraArgs...)
	}
	// A free port can be taken by someone else between our check and the
	// server's listen; try again on a new port (and a new database) when that
	// happens.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		dir := t.TempDir()
		dbArg := demoDB(t, dir)
		port, err := stackstest.FreePort()
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		args := append([]string{"serve", "--demo", "--db", dbArg, "--addr", addr}, extraArgs...)
		s, err := launch(t, args, "http://"+addr+base)
		if err == nil {
			s.Dir, s.DB = dir, dbArg
			return s
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	t.Fatalf("starting stacks: %v", lastErr)
	return nil
}

// demoTemplate is the demo library `stacks demo` made for today, which
// copyDemo copies for each server: making it costs over a second of CPU (the
// staff passwords are hashed at bcrypt's real cost), copying it a few
// milliseconds.
var demoTemplate struct {
	mu   sync.Mutex
	dir  string // TestMain's directory
	day  string // the UTC day path was made on
	path string
}

// demoDB returns the database of a new copy of today's demo library, for
// --db: a file in dir (copyDemo), or on PostgreSQL the URL of a new database
// on the test cluster, copied from a template that stacks demo filled, dropped
// when t ends.
func demoDB(t testing.TB, dir string) string {
	t.Helper()
	if dbtest.Engine() != db.Postgres {
		path := filepath.Join(dir, "stacks.db")
		copyDemo(t, path)
		return path
	}
	day := time.Now().UTC().Format(time.DateOnly)
	tmpl, err := pgtest.TemplateURL("e2e-demo-"+day, func(url string) error {
		if out, err := exec.Command(stacksBin, "demo", "--db", url).CombinedOutput(); err != nil {
			return fmt.Errorf("stacks demo --db %s: %v\n%s", db.DisplayName(url), err, out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pgtest.CopyURL(t, tmpl)
}

// copyDemo puts a copy of today's demo library at path: the library `stacks
// serve --demo` would create there, made by the binary under test with `stacks
// demo`. The demo's dates are relative to the UTC day it is made on, so a new
// day gets a new one; serve --demo serves a library that is already there.
func copyDemo(t testing.TB, path string) {
	t.Helper()
	demoTemplate.mu.Lock()
	defer demoTemplate.mu.Unlock()
	if day := time.Now().UTC().Format(time.DateOnly); day != demoTemplate.day {
		tmpl := filepath.Join(demoTemplate.dir, "demo-"+day+".db")
		if out, err := exec.Command(stacksBin, "demo", "--db", tmpl).CombinedOutput(); err != nil {
			t.Fatalf("stacks demo --db %s: %v\n%s", tmpl, err, out)
		}
		if _, err := os.Stat(tmpl + "-wal"); err == nil {
			t.Fatalf("%s-wal is still there after stacks demo: copies of %s would miss its pages", tmpl, tmpl)
		}
		demoTemplate.day, demoTemplate.path = day, tmpl
	}
	b, err := os.ReadFile(demoTemplate.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func launch(t testing.TB, args []string, baseURL string) (*server, error) {
	recordInputs(t)
	out := &stackstest.Buffer{}
	cmd := exec.Command(stacksBin, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", stacksBin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()

	stop := func() {
		select {
		case <-exited:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			t.Errorf("stacks did not exit within %v of SIGTERM; killing it", stopTimeout)
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	if err := stackstest.WaitHealthy(baseURL+"/healthz", startTimeout, exited); err != nil {
		stop()
		return nil, fmt.Errorf("stacks %s: %w (exit: %v)\n--- server output ---\n%s", strings.Join(args, " "), err, waitErr, out.String())
	}

	s := &server{BaseURL: baseURL, out: out}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("--- stacks output (%s) ---\n%s", strings.Join(args, " "), out.String())
		}
	})
	return s, nil
}

// browsers is the Playwright driver and headless Chromium that the package's
// tests share: launchBrowser starts them the first time a test asks, and
// runMain stops them after the last test. Starting the two costs a few seconds
// of a busy machine's CPU, which every browser test used to pay again; each
// test still works in browser contexts of its own (newPage), with their own
// cookies, storage and cache, closed when the test ends.
var browsers struct {
	mu      sync.Mutex
	pw      *playwright.Playwright
	browser playwright.Browser
}

// launchBrowser returns the package's headless Debian Chromium, starting it and
// the Playwright driver if no test has yet, or again if the last one went away
// (it crashed). A missing driver or browser fails the test: browser tests are
// never skipped.
func launchBrowser(t testing.TB) playwright.Browser {
	t.Helper()
	browsers.mu.Lock()
	defer browsers.mu.Unlock()
	if browsers.browser != nil && browsers.browser.IsConnected() {
		return browsers.browser
	}
	if err := stopBrowser(); err != nil {
		t.Logf("stopping the browser that went away: %v", err)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium not found at %s (%v): %s", chromiumPath, err, fixHint)
	}
	pw, err := playwright.Run(&playwright.RunOptions{SkipInstallBrowsers: true})
	if err != nil {
		t.Fatalf("starting the Playwright driver: %v\n%s", err, fixHint)
	}
	browser, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(chromiumPath),
		Headless:       playwright.Bool(true),
		Args:           []string{"--disable-gpu", "--disable-quic"},
	})
	if err != nil {
		_ = pw.Stop()
		t.Fatalf("launching %s: %v\n%s", chromiumPath, err, fixHint)
	}
	browsers.pw, browsers.browser = pw, browser
	return browser
}

// stopBrowser closes the shared browser and stops the driver, if they run.
// The caller holds browsers.mu (or the tests are over).
func stopBrowser() error {
	var errs []error
	if browsers.browser != nil {
		if err := browsers.browser.Close(); err != nil && browsers.browser.IsConnected() {
			errs = append(errs, fmt.Errorf("closing the browser: %w", err))
		}
	}
	if browsers.pw != nil {
		if err := browsers.pw.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping Playwright: %w", err))
		}
	}
	browsers.pw, browsers.browser = nil, nil
	return errors.Join(errs...)
}

// newPage opens a page in a fresh browser context (its own cookies, so its
// own session), created with opts if given. When the test fails, the page's
// URL and visible text are logged to show what the user would have seen.
func newPage(t testing.TB, browser playwright.Browser, opts ...playwright.BrowserNewContextOptions) (playwright.Page, playwright.BrowserContext) {
	t.Helper()
	bctx, err := browser.NewContext(opts...)
	if err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	bctx.SetDefaultTimeout(uiTimeout)
	bctx.SetDefaultNavigationTimeout(uiTimeout)
	page, err := bctx.NewPage()
	if err != nil {
		t.Fatalf("new page: %v", err)
	}
	var mu sync.Mutex
	var pageErrors []string
	page.OnPageError(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		pageErrors = append(pageErrors, err.Error())
	})
	t.Cleanup(func() {
		if t.Failed() {
			logPage(t, page)
			mu.Lock()
			if len(pageErrors) > 0 {
				t.Logf("JavaScript errors on the page:\n%s", strings.Join(pageErrors, "\n"))
			}
			mu.Unlock()
		}
		_ = bctx.Close()
	})
	return page, bctx
}

// newBrowser returns a page in a fresh context of the shared browser. Tests
// that need several independent sessions call launchBrowser once and newPage
// for each.
func newBrowser(t testing.TB) (playwright.Page, playwright.BrowserContext) {
	t.Helper()
	return newPage(t, launchBrowser(t))
}

func logPage(t testing.TB, page playwright.Page) {
	text, err := page.Locator("body").InnerText(playwright.LocatorInnerTextOptions{Timeout: playwright.Float(2000)})
	if err != nil {
		text = "(could not read the page: " + err.Error() + ")"
	}
	const max = 3000
	if len(text) > max {
		text = text[:max] + "\n…"
	}
	t.Logf("--- page at failure: %s ---\n%s", page.URL(), text)
}

// httpClient returns a client that does not follow redirects, for checking
// the server's responses themselves.
func httpClient() *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// must fails the test at once if err is not nil; it keeps a sequence of
// browser steps readable.
func must(t testing.TB, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}
