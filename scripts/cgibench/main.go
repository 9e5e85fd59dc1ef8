// Command cgibench times stacks as a CGI program the way the issue measured it:
// Go's own CGI host (net/http/cgi.Handler) starts the binary once per request, in
// this process. It signs in once as desk, then runs each page N times per target,
// the targets alternating request by request so that a busy machine slows them
// alike, and prints the median, the 10th and 90th percentiles and the CPU time
// (user+system) the CGI children used, per target and page.
//
// Targets are the binaries given (stacks builds, run under Go's CGI host), with
// -floors the floors built from scripts/cgibench/floors (a shell CGI script; a bare
// Go CGI program; Go with the database opened and its schema checked, as stacks
// cgi does before its handler), and with -url NAME=URL web servers already serving
// Stacks (lighttpd's CGI or FastCGI, a persistent stacks serve), asked over HTTP.
// A floor answers every page with "ok"; it shows what any program costs there.
//
//	go run ./scripts/cgibench -db demo.db -n 200 /tmp/stacks-before /tmp/stacks-after
//	go run ./scripts/cgibench -db demo.db -floors -url persistent=http://127.0.0.1:8080 bin/stacks
//
// See docs/performance.md, "CGI and FastCGI".
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// target is something that answers the pages: a CGI program under Go's host, or
// a web server over HTTP.
type target struct {
	name  string
	floor bool // answers "ok" to anything: no sign-in
	serve func(req *http.Request) (*http.Response, error)
	cpu   bool // CPU time is the CGI children's, measurable here
	// cookies is the desk's session on this target (URL targets sign in each; the
	// binaries share the database, so one sign-in serves them all).
	cookies []*http.Cookie
}

// urlFlags collects -url NAME=URL.
type urlFlags []string

func (u *urlFlags) String() string     { return strings.Join(*u, ",") }
func (u *urlFlags) Set(s string) error { *u = append(*u, s); return nil }

func main() {
	dbPath := flag.String("db", "", "the demo library (stacks demo --db FILE) the binaries serve")
	n := flag.Int("n", 200, "requests per page and target")
	floors := flag.Bool("floors", false, "also time the floors built from scripts/cgibench/floors")
	var urls urlFlags
	flag.Var(&urls, "url", "NAME=URL of a web server serving Stacks on its own fresh demo library (repeatable)")
	flag.Parse()
	bins := flag.Args()
	if *dbPath == "" || len(bins) == 0 {
		log.Fatal("usage: cgibench -db FILE [-n N] [-floors] [-url NAME=URL]... BINARY...")
	}
	abs, err := filepath.Abs(*dbPath)
	if err != nil {
		log.Fatal(err)
	}
	cgiTarget := func(name, bin string, floor bool) *target {
		h := &cgi.Handler{Path: bin, Env: []string{"STACKS_DB=" + abs, "STACKS_LOG_LEVEL=warn"}, Stderr: os.Stderr}
		return &target{name: name, floor: floor, cpu: true, serve: func(req *http.Request) (*http.Response, error) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Result(), nil
		}}
	}
	var targets []*target
	for _, bin := range bins {
		targets = append(targets, cgiTarget(filepath.Base(bin), bin, false))
	}
	if *floors {
		dir, err := os.MkdirTemp("", "cgibench-floors-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		src := floorsDir()
		for _, f := range []string{"cgi-db", "cgi-go"} {
			out := filepath.Join(dir, "floor-"+f)
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, ".")
			cmd.Dir = filepath.Join(src, f)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				log.Fatalf("building the floor %s: %v\n%s", f, err, b)
			}
			targets = append(targets, cgiTarget("floor-"+f, out, true))
		}
		targets = append(targets, cgiTarget("floor-cgi-sh", filepath.Join(src, "cgi-sh"), true))
	}
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, u := range urls {
		name, base, ok := strings.Cut(u, "=")
		if !ok || name == "" || !strings.HasPrefix(base, "http") {
			log.Fatalf("-url %q: give NAME=http://host:port/mount", u)
		}
		base = strings.TrimSuffix(base, "/")
		targets = append(targets, &target{name: name, serve: func(req *http.Request) (*http.Response, error) {
			out, err := http.NewRequest(req.Method, base+req.URL.RequestURI(), req.Body)
			if err != nil {
				return nil, err
			}
			out.Header = req.Header
			return client.Do(out)
		}})
	}

	// Sign in as desk: once through the first binary for all binaries (they share
	// the database), once on each web server.
	var shared []*http.Cookie
	for _, t := range targets {
		if t.floor {
			continue
		}
		if t.cpu && shared != nil {
			t.cookies = shared
			continue
		}
		t.cookies = signIn(t)
		if t.cpu {
			shared = t.cookies
		}
	}

	pages := []struct {
		name, path string
		signedIn   bool
	}{{"/healthz", "/healthz", false}, {"/login", "/login", false}, {"/checkout (signed in)", "/checkout", true}}
	fmt.Printf("| page | target | median ms | p10 ms | p90 ms | CPU ms/request |\n|---|---|---:|---:|---:|---:|\n")
	for _, p := range pages {
		times := make([][]time.Duration, len(targets))
		cpu := make([]time.Duration, len(targets))
		for i := 0; i < *n; i++ {
			for b, t := range targets {
				req := httptest.NewRequest("GET", p.path, nil)
				if p.signedIn {
					for _, c := range t.cookies {
						req.AddCookie(c)
					}
				}
				before := childCPU()
				start := time.Now()
				resp, err := t.serve(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				times[b] = append(times[b], time.Since(start))
				cpu[b] += childCPU() - before
				if err != nil {
					log.Fatalf("%s %s: %v", t.name, p.path, err)
				}
				if resp.StatusCode != http.StatusOK {
					log.Fatalf("%s %s: %s", t.name, p.path, resp.Status)
				}
			}
		}
		for b, t := range targets {
			d := times[b]
			slices.Sort(d)
			ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }
			c := "-"
			if t.cpu {
				c = ms(cpu[b] / time.Duration(len(d)))
			}
			fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", p.name, t.name, ms(d[len(d)/2]), ms(d[len(d)/10]), ms(d[len(d)*9/10]), c)
		}
	}
}

// signIn signs in as desk on t and returns the session cookie.
func signIn(t *target) []*http.Cookie {
	form := url.Values{"username": {"desk"}, "password": {"desk"}}.Encode()
	req := httptest.NewRequest("POST", "/login", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := t.serve(req)
	if err != nil {
		log.Fatalf("%s: sign in as desk: %v", t.name, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		log.Fatalf("%s: sign in as desk: %s, cookies %v\n%s", t.name, resp.Status, resp.Cookies(), body)
	}
	return resp.Cookies()
}

// floorsDir is scripts/cgibench/floors, beside this file's package.
func floorsDir() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		if d := filepath.Join(filepath.Dir(file), "floors"); isDir(d) {
			return d
		}
	}
	if d := filepath.Join("scripts", "cgibench", "floors"); isDir(d) {
		return d
	}
	log.Fatal("scripts/cgibench/floors not found: run cgibench from the repository's root")
	return ""
}

func isDir(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

// childCPU is the user and system time of this process's waited-for children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
