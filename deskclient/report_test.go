package deskclient_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/deskclient"
)

func TestParseServerTiming(t *testing.T) {
	app, db, n, ok := deskclient.ParseServerTiming(`app;dur=1.250, db;dur=0.500, sql;desc="7"`)
	if !ok || app != 1250*time.Microsecond || db != 500*time.Microsecond || n != 7 {
		t.Fatalf("got %v %v %d %v", app, db, n, ok)
	}
	if _, _, _, ok := deskclient.ParseServerTiming("total;dur=3"); ok {
		t.Fatal("parsed a header without our fields")
	}
}

func TestSummarize(t *testing.T) {
	run := func(mode string, wall ...time.Duration) deskclient.SessionRun {
		r := deskclient.SessionRun{Mode: mode, Client: "scripted"}
		for i, w := range wall {
			r.Steps = append(r.Steps, deskclient.StepResult{Name: string(rune('a' + i)), Wall: w, App: w / 2, Pages: 2, Requests: 3, Statements: 8})
		}
		return r
	}
	ms := time.Millisecond
	sums := deskclient.Summarize([]deskclient.SessionRun{
		run("server", 10*ms, 1*ms), run("server", 30*ms, 3*ms), run("server", 20*ms, 100*ms),
		run("cgi", 40*ms, 4*ms), run("cgi", 40*ms, 4*ms),
	})
	if len(sums) != 2 || sums[0].Mode != "server" || sums[0].Runs != 3 {
		t.Fatalf("summaries %+v", sums)
	}
	s := sums[0]
	if s.Steps[0].Wall != 20*ms || s.Steps[1].Wall != 3*ms {
		t.Errorf("step medians %v %v, want 20ms 3ms", s.Steps[0].Wall, s.Steps[1].Wall)
	}
	// The total is the median of the runs' totals (11, 33, 120), not a sum of medians.
	if s.Total.Wall != 33*ms || s.Total.Pages != 4 || s.Total.SQLPerPage() != 4 {
		t.Errorf("total %+v", s.Total)
	}
	if sums[1].Total.Wall != 44*ms {
		t.Errorf("even count median: %v, want 44ms", sums[1].Total.Wall)
	}
	md := deskclient.Markdown(sums)
	for _, want := range []string{"### Scripted session", "| **total** | 33.0 |", "| 1.33 |", "123 s", "31.5 s"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestMarkdownModes: every mode gets its columns beside the persistent server's,
// with its ratio to it, in the order the runs came.
func TestMarkdownModes(t *testing.T) {
	ms := time.Millisecond
	run := func(mode string, wall time.Duration) deskclient.SessionRun {
		return deskclient.SessionRun{Mode: mode, Client: "browser", Steps: []deskclient.StepResult{{Name: "1 login", Wall: wall, App: wall / 10, Pages: 1, Requests: 2, Statements: 4}}}
	}
	md := deskclient.Markdown(deskclient.Summarize([]deskclient.SessionRun{
		run("server", 20*ms), run("cgi", 30*ms), run("lighttpd-cgi", 40*ms), run("lighttpd-fcgi", 21*ms),
	}))
	for _, want := range []string{
		"| step | persistent wall ms | CGI (Go host) wall ms | CGI (lighttpd) wall ms | FastCGI (lighttpd) wall ms | CGI (Go host) / persistent |",
		"| 1 login | 20.0 | 30.0 | 40.0 | 21.0 | 1.50 | 2.00 | 1.05 | 1 | 2 | 4.0 | 2.0 | 0.0 |",
		"| FastCGI (lighttpd) | 21.0 | 1.05 | 2.1 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Scripted session") {
		t.Errorf("a scripted table without scripted runs:\n%s", md)
	}
}
