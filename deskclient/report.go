package deskclient

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// SessionRun is one timed desk session: which server mode, which client
// ("browser" or "scripted"), and its steps.
type SessionRun struct {
	Mode   string       `json:"mode"`
	Client string       `json:"client"`
	Steps  []StepResult `json:"steps"`
}

// StepSummary is the median of a step over several runs.
type StepSummary struct {
	Name       string        `json:"name"`
	Wall       time.Duration `json:"wall_ns"`
	App        time.Duration `json:"app_ns"`
	DB         time.Duration `json:"db_ns"`
	Pages      int           `json:"pages"`
	Requests   int           `json:"requests"`
	Statements int           `json:"statements"`
	Selects    int           `json:"selects"`
}

// Summary is the medians of one mode and client over its runs.
type Summary struct {
	Mode   string        `json:"mode"`
	Client string        `json:"client"`
	Runs   int           `json:"runs"`
	Steps  []StepSummary `json:"steps"`
	Total  StepSummary   `json:"total"`
}

// SQLPerPage is the statements per page shown.
func (s StepSummary) SQLPerPage() float64 {
	if s.Pages == 0 {
		return 0
	}
	return float64(s.Statements) / float64(s.Pages)
}

// SQLPerRequest is the statements per request served.
func (s StepSummary) SQLPerRequest() float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(s.Statements) / float64(s.Requests)
}

// SelectsPerRequest is the SELECTs per request served, Koha's measure.
func (s StepSummary) SelectsPerRequest() float64 {
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

// Summarize takes the medians per mode, client and step (and of the totals).
func Summarize(runs []SessionRun) []Summary {
	type key struct{ mode, client string }
	groups := map[key][]SessionRun{}
	var order []key
	for _, r := range runs {
		k := key{r.Mode, r.Client}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []Summary
	for _, k := range order {
		g := groups[k]
		sum := Summary{Mode: k.mode, Client: k.client, Runs: len(g)}
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
			sum.Steps = append(sum.Steps, StepSummary{Name: g[0].Steps[i].Name, Wall: median(w), App: median(a), DB: median(d),
				Pages: medianInt(p), Requests: medianInt(rq), Statements: medianInt(st), Selects: medianInt(se)})
		}
		for _, r := range g {
			var t StepSummary
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
		sum.Total = StepSummary{Name: "total", Wall: median(tw), App: median(ta), DB: median(td), Pages: medianInt(tp), Requests: medianInt(tr),
			Statements: medianInt(ts), Selects: medianInt(tse)}
		out = append(out, sum)
	}
	return out
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

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

// Markdown renders the summaries as tables: per client, each step's wall time in
// every mode side by side with its ratio to the persistent server ("server"), then
// the totals with the server's own time, then the Koha reference figures.
func Markdown(sums []Summary) string {
	var b strings.Builder
	for _, client := range []string{"browser", "scripted"} {
		var srv *Summary
		var others []*Summary
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
			row := func(o *Summary) StepSummary {
				if i < len(o.Steps) {
					return o.Steps[i]
				}
				return o.Total
			}
			fmt.Fprintf(&b, "| %s | %s", name, ms(s.Wall))
			for _, o := range others {
				fmt.Fprintf(&b, " | %s", ms(row(o).Wall))
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
		for _, o := range append([]*Summary{srv}, others...) {
			fmt.Fprintf(&b, "| %s | %s | %.2f | %s | %s | %d |\n", modeLabel(o.Mode), ms(o.Total.Wall), ratio(o.Total.Wall, srv.Total.Wall), ms(o.Total.App), ms(o.Total.DB), o.Total.Requests)
		}
	}
	b.WriteString("\n### Reference: Koha's desk session (from the screencast measurement)\n\n")
	b.WriteString("| measurement | persistent | CGI | CGI/persistent | SQL per page |\n|---|---:|---:|---:|---:|\n")
	b.WriteString("| browser session | 123 s | 166 s | 1.35 | about 45 SELECTs |\n")
	b.WriteString("| scripted, server-side | 12.3 s | 31.5 s | 2.56 | about 45 SELECTs |\n")
	return b.String()
}
