// Command cgibench times stacks as a CGI program the way the issue measured it:
// Go's own CGI host (net/http/cgi.Handler) starts the binary once per request, in
// this process. It signs in once as desk, then runs each page N times per binary,
// the binaries alternating request by request so that a busy machine slows them
// alike, and prints the median, the 10th and 90th percentiles and the CPU time
// (user+system) the children used, per binary and page.
//
//	go run ./scripts/cgibench -db demo.db -n 200 /tmp/stacks-before /tmp/stacks-after
//
// See docs/performance.md, "CGI cost".
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	dbPath := flag.String("db", "", "the demo library (stacks demo --db FILE)")
	n := flag.Int("n", 200, "requests per page and binary")
	flag.Parse()
	bins := flag.Args()
	if *dbPath == "" || len(bins) == 0 {
		log.Fatal("usage: cgibench -db FILE [-n N] BINARY...")
	}
	abs, err := filepath.Abs(*dbPath)
	if err != nil {
		log.Fatal(err)
	}
	handler := func(bin string) http.Handler {
		return &cgi.Handler{Path: bin, Env: []string{"STACKS_DB=" + abs, "STACKS_LOG_LEVEL=warn"}, Stderr: os.Stderr}
	}

	// Sign in once, through the first binary; the session lives in the database.
	form := url.Values{"username": {"desk"}, "password": {"desk"}}.Encode()
	req := httptest.NewRequest("POST", "/login", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	handler(bins[0]).ServeHTTP(rec, req)
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) == 0 {
		log.Fatalf("sign in as desk: %d, cookies %v\n%s", rec.Code, cookies, rec.Body.String())
	}

	pages := []struct {
		name, path string
		signedIn   bool
	}{{"/healthz", "/healthz", false}, {"/login", "/login", false}, {"/checkout (signed in)", "/checkout", true}}
	fmt.Printf("| page | binary | median ms | p10 ms | p90 ms | CPU ms/request |\n|---|---|---:|---:|---:|---:|\n")
	for _, p := range pages {
		times := make([][]time.Duration, len(bins))
		cpu := make([]time.Duration, len(bins))
		for i := 0; i < *n; i++ {
			for b, bin := range bins {
				req := httptest.NewRequest("GET", p.path, nil)
				if p.signedIn {
					for _, c := range cookies {
						req.AddCookie(c)
					}
				}
				rec := httptest.NewRecorder()
				before := childCPU()
				start := time.Now()
				handler(bin).ServeHTTP(rec, req)
				times[b] = append(times[b], time.Since(start))
				cpu[b] += childCPU() - before
				if rec.Code != http.StatusOK {
					log.Fatalf("%s %s: %d\n%s", bin, p.path, rec.Code, rec.Body.String())
				}
			}
		}
		for b, bin := range bins {
			t := times[b]
			slices.Sort(t)
			ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }
			fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", p.name, filepath.Base(bin), ms(t[len(t)/2]), ms(t[len(t)/10]), ms(t[len(t)*9/10]), ms(cpu[b]/time.Duration(len(t))))
		}
	}
}

// childCPU is the user and system time of this process's waited-for children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
