package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// sessionRun is one timed desk session: which server mode, which client
// ("browser" or "scripted"), and its steps.
type sessionRun struct {
	Mode   string       `json:"mode"`
	Client string       `json:"client"`
	Steps  []stepResult `json:"steps"`
}

// stepSummary is the median of a step over several runs.
type stepSummary struct {
	Name       string        `json:"name"`
	Wall       time.Duration `json:"wall_ns"`
	App        time.Duration `json:"app_ns"`
	DB         time.Duration `json:"db_ns"`
	Pages      int           `json:"pages"`
	Requests   int           `json:"requests"`
	Statements int           `json:"statements"`
	Selects    int           `json:"selects"`
}

// sessionSummary is the medians of one mode and client over its runs.
type sessionSummary struct {
	Mode   string        `json:"mode"`
	Client string        `json:"client"`
	Runs   int           `json:"runs"`
	Steps  []stepSummary `json:"steps"`
	Total  stepSummary   `json:"total"`
}

// SQLPerPage is the statements per page shown.
func (s stepSummary) SQLPerPage() float64 {
	if s.Pages == 0 {
		return 0
	}
	return float64(s.Statements) / float64(s.Pages)
}

// SQLPerRequest is the statements per request served.
func (s stepSummary) SQLPerRequest() float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(s.Statements) / float64(s.Requests)
}

// SelectsPerRequest is the SELECTs per request served, Koha's measure.
func (s stepSummary) SelectsPerRequest() float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(s.Selects) / float64(s.Requests)
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianInt(ns []int) int {
	ds := make([]time.Duration, len(ns))
	for i, n := range ns {
		ds[i] = time.Duration(n)
	}
	return int(median(ds))
}

// summarize takes the medians per mode, client and step (and of the totals).
func summarize(runs []sessionRun) []sessionSummary {
	type key struct{ mode, client string }
	groups := map[key][]sessionRun{}
	var order []key
	for _, r := range runs {
		k := key{r.Mode, r.Client}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []sessionSummary
	for _, k := range order {
		g := groups[k]
		sum := sessionSummary{Mode: k.mode, Client: k.client, Runs: len(g)}
		var tw, ta, td []time.Duration
		var tp, tr, ts, tse []int
		for i := range g[0].Steps {
			var w, a, d []time.Duration
			var p, rq, st, se []int
			for _, r := range g {
				if i >= len(r.Steps) {
					continue
				}
				s := r.Steps[i]
				w, a, d = append(w, s.Wall), append(a, s.App), append(d, s.DB)
				p, rq, st, se = append(p, s.Pages), append(rq, s.Requests), append(st, s.Statements), append(se, s.Selects)
			}
			sum.Steps = append(sum.Steps, stepSummary{Name: g[0].Steps[i].Name, Wall: median(w), App: median(a), DB: median(d),
				Pages: medianInt(p), Requests: medianInt(rq), Statements: medianInt(st), Selects: medianInt(se)})
		}
		for _, r := range g {
			var t stepSummary
			for _, s := range r.Steps {
				t.Wall += s.Wall
				t.App += s.App
				t.DB += s.DB
				t.Pages += s.Pages
				t.Requests += s.Requests
				t.Statements += s.Statements
				t.Selects += s.Selects
			}
			tw, ta, td = append(tw, t.Wall), append(ta, t.App), append(td, t.DB)
			tp, tr, ts, tse = append(tp, t.Pages), append(tr, t.Requests), append(ts, t.Statements), append(tse, t.Selects)
		}
		sum.Total = stepSummary{Name: "total", Wall: median(tw), App: median(ta), DB: median(td), Pages: medianInt(tp), Requests: medianInt(tr),
			Statements: medianInt(ts), Selects: medianInt(tse)}
		out = append(out, sum)
	}
	return out
}

func fmtMS(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// modeLabels name the serving modes in the report's columns.
var modeLabels = map[string]string{
	"server":        "persistent",
	"cgi":           "CGI (Go host)",
	"lighttpd-cgi":  "CGI (lighttpd)",
	"lighttpd-fcgi": "FastCGI (lighttpd)",
}

func modeLabel(mode string) string {
	if l, ok := modeLabels[mode]; ok {
		return l
	}
	return mode
}

// markdown renders the summaries as tables: per client, each step's wall time in
// every mode side by side with its ratio to the persistent server ("server"), then
// the totals with the server's own time, then the Koha reference figures.
func markdown(sums []sessionSummary) string {
	var b strings.Builder
	for _, client := range []string{"browser", "scripted"} {
		var srv *sessionSummary
		var others []*sessionSummary
		for i := range sums {
			switch {
			case sums[i].Client != client:
			case sums[i].Mode == "server":
				srv = &sums[i]
			default:
				others = append(others, &sums[i])
			}
		}
		if srv == nil || len(others) == 0 {
			continue
		}
		runs := srv.Runs
		for _, o := range others {
			runs = min(runs, o.Runs)
		}
		ratio := func(a, b time.Duration) float64 {
			if b <= 0 {
				return 0
			}
			return float64(a) / float64(b)
		}
		fmt.Fprintf(&b, "\n### %s session (median of %d runs per mode)\n\n", strings.ToUpper(client[:1])+client[1:], runs)
		b.WriteString("| step | " + modeLabel(srv.Mode) + " wall ms")
		for _, o := range others {
			b.WriteString(" | " + modeLabel(o.Mode) + " wall ms")
		}
		for _, o := range others {
			b.WriteString(" | " + modeLabel(o.Mode) + " / persistent")
		}
		b.WriteString(" | pages | requests | SQL per page | SQL per request | SELECTs per request |\n|---|---:")
		b.WriteString(strings.Repeat("|---:", 2*len(others)+5) + "|\n")
		rows := append(slices.Clone(srv.Steps), srv.Total)
		for i, s := range rows {
			name := s.Name
			if name == "total" {
				name = "**total**"
			}
			row := func(o *sessionSummary) stepSummary {
				if i < len(o.Steps) {
					return o.Steps[i]
				}
				return o.Total
			}
			fmt.Fprintf(&b, "| %s | %s", name, fmtMS(s.Wall))
			for _, o := range others {
				fmt.Fprintf(&b, " | %s", fmtMS(row(o).Wall))
			}
			for _, o := range others {
				fmt.Fprintf(&b, " | %.2f", ratio(row(o).Wall, s.Wall))
			}
			fmt.Fprintf(&b, " | %d | %d | %.1f | %.1f | %.1f |\n", s.Pages, s.Requests, s.SQLPerPage(), s.SQLPerRequest(), s.SelectsPerRequest())
		}
		// The totals again, with the time the handlers themselves took (the sum of
		// Server-Timing's app): what is left is the browser or client, the network
		// and, for CGI, starting a process per request.
		b.WriteString("\n| mode | total wall ms | / persistent | handlers (app) ms | SQL (db) ms | requests |\n|---|---:|---:|---:|---:|---:|\n")
		for _, o := range append([]*sessionSummary{srv}, others...) {
			fmt.Fprintf(&b, "| %s | %s | %.2f | %s | %s | %d |\n", modeLabel(o.Mode), fmtMS(o.Total.Wall), ratio(o.Total.Wall, srv.Total.Wall), fmtMS(o.Total.App), fmtMS(o.Total.DB), o.Total.Requests)
		}
	}
	b.WriteString("\n### Reference: Koha's desk session (from the screencast measurement)\n\n")
	b.WriteString("| measurement | persistent | CGI | CGI/persistent | SQL per page |\n|---|---:|---:|---:|---:|\n")
	b.WriteString("| browser session | 123 s | 166 s | 1.35 | about 45 SELECTs |\n")
	b.WriteString("| scripted, server-side | 12.3 s | 31.5 s | 2.56 | about 45 SELECTs |\n")
	return b.String()
}

func TestSummarize(t *testing.T) {
	run := func(mode string, wall ...time.Duration) sessionRun {
		r := sessionRun{Mode: mode, Client: "scripted"}
		for i, w := range wall {
			r.Steps = append(r.Steps, stepResult{Name: string(rune('a' + i)), Wall: w, App: w / 2, Pages: 2, Requests: 3, Statements: 8})
		}
		return r
	}
	ms := time.Millisecond
	sums := summarize([]sessionRun{
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
	md := markdown(sums)
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
	run := func(mode string, wall time.Duration) sessionRun {
		return sessionRun{Mode: mode, Client: "browser", Steps: []stepResult{{Name: "1 login", Wall: wall, App: wall / 10, Pages: 1, Requests: 2, Statements: 4}}}
	}
	md := markdown(summarize([]sessionRun{
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
