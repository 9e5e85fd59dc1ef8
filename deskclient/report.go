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

// Markdown renders the summaries as tables: per client, each step in server and
// CGI mode side by side with their ratio, then the Koha reference figures.
func Markdown(sums []Summary) string {
	find := func(mode, client string) *Summary {
		for i := range sums {
			if sums[i].Mode == mode && sums[i].Client == client {
				return &sums[i]
			}
		}
		return nil
	}
	var b strings.Builder
	for _, client := range []string{"browser", "scripted"} {
		srv, cgi := find("server", client), find("cgi", client)
		if srv == nil || cgi == nil {
			continue
		}
		fmt.Fprintf(&b, "\n### %s session (median of %d runs per mode)\n\n", strings.ToUpper(client[:1])+client[1:], min(srv.Runs, cgi.Runs))
		b.WriteString("| step | server wall ms | server app ms | CGI wall ms | CGI app ms | CGI/server wall | pages | requests | SQL per page | SQL per request | SELECTs per request |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		rows := append(slices.Clone(srv.Steps), srv.Total)
		crows := append(slices.Clone(cgi.Steps), cgi.Total)
		for i, s := range rows {
			c := crows[i]
			ratio := 0.0
			if s.Wall > 0 {
				ratio = float64(c.Wall) / float64(s.Wall)
			}
			name := s.Name
			if name == "total" {
				name = "**total**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.2f | %d | %d | %.1f | %.1f | %.1f |\n", name, ms(s.Wall), ms(s.App), ms(c.Wall), ms(c.App), ratio,
				s.Pages, s.Requests, s.SQLPerPage(), s.SQLPerRequest(), s.SelectsPerRequest())
		}
	}
	b.WriteString("\n### Reference: Koha's desk session (from the screencast measurement)\n\n")
	b.WriteString("| measurement | persistent | CGI | CGI/persistent | SQL per page |\n|---|---:|---:|---:|---:|\n")
	b.WriteString("| browser session | 123 s | 166 s | 1.35 | about 45 SELECTs |\n")
	b.WriteString("| scripted, server-side | 12.3 s | 31.5 s | 2.56 | about 45 SELECTs |\n")
	return b.String()
}
