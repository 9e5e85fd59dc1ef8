package load

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Settings are a run's parameters, kept with its figures.
type Settings struct {
	Label    string `json:"label,omitempty"`
	Protocol string `json:"protocol"` // "http" or "sip2"
	// Desk is how an http desk works the site: "pages" or "script" (Desk).
	Desk      string  `json:"desk,omitempty"`
	Target    string  `json:"target"`
	Users     int     `json:"users"`
	Items     int     `json:"items_per_share"`
	ThinkS    float64 `json:"think_s"`
	Jitter    float64 `json:"jitter"`
	DurationS float64 `json:"duration_s,omitempty"`
	Count     int     `json:"count,omitempty"`
	// Server describes the server's settings when known (read pool, synchronous).
	Server  string   `json:"server,omitempty"`
	Command []string `json:"command,omitempty"`
}

// Memory is the server's resident memory, read from /proc after the run.
type Memory struct {
	PID int `json:"pid"`
	// PeakKB is VmHWM: the peak resident set since the server started, or since
	// the peak was reset before the run.
	PeakKB int64 `json:"peak_kb"`
	// RSSKB is VmRSS at the end of the run.
	RSSKB int64 `json:"rss_kb"`
}

// Output is a run's report with its settings: what --json writes.
type Output struct {
	Settings Settings `json:"settings"`
	Started  string   `json:"started"`
	Report   *Report  `json:"-"`
	Memory   *Memory  `json:"server_memory,omitempty"`
	// MoreMemory is the other servers' memory when the run spread its users
	// over several (Memory is the first's).
	MoreMemory []*Memory `json:"more_servers_memory,omitempty"`
	// CPU is where the machine's CPU went during the measured time.
	CPU *CPUUse `json:"cpu,omitempty"`
	// Postgres is PostgreSQL's background work during the measured time, when
	// the servers' database is one (the shares were read through its URL).
	Postgres *PGActivity `json:"postgres,omitempty"`
	// Writes is where the servers' writes waited during the measured time.
	Writes WriteWaits `json:"write_stages,omitempty"`
}

// jsonSummary is Summary in milliseconds, for people and scripts.
type jsonSummary struct {
	Count          int      `json:"count"`
	Errors         int      `json:"errors"`
	AvgMS          float64  `json:"avg_ms"`
	MedianMS       float64  `json:"median_ms"`
	P95MS          float64  `json:"p95_ms"`
	P99MS          float64  `json:"p99_ms"`
	MaxMS          float64  `json:"max_ms"`
	TPS            float64  `json:"tps"`
	ServerMedianMS *float64 `json:"server_app_median_ms,omitempty"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func toJSON(s Summary) jsonSummary {
	j := jsonSummary{Count: s.Count, Errors: s.Errors, AvgMS: ms(s.Avg), MedianMS: ms(s.Median),
		P95MS: ms(s.P95), P99MS: ms(s.P99), MaxMS: ms(s.Max), TPS: s.TPS}
	if s.ServerKnown {
		v := ms(s.ServerMedian)
		j.ServerMedianMS = &v
	}
	return j
}

// MarshalJSON writes the settings, the figures in milliseconds, and the errors.
func (o Output) MarshalJSON() ([]byte, error) {
	ops := map[string]jsonSummary{}
	for op, s := range o.Report.Ops {
		ops[string(op)] = toJSON(s)
	}
	return json.Marshal(struct {
		Settings   Settings               `json:"settings"`
		Started    string                 `json:"started"`
		ElapsedS   float64                `json:"elapsed_s"`
		LoginS     float64                `json:"login_s"`
		WarmupS    float64                `json:"warmup_s,omitempty"`
		WarmupErrs int                    `json:"warmup_errors,omitempty"`
		Operations map[string]jsonSummary `json:"operations"`
		TotalTPS   float64                `json:"total_tps"`
		Errors     map[string]int         `json:"errors,omitempty"`
		GaveUp     int                    `json:"users_gave_up,omitempty"`
		Unmeasured int                    `json:"unmeasured_checkins"`
		Memory     *Memory                `json:"server_memory,omitempty"`
		MoreMemory []*Memory              `json:"more_servers_memory,omitempty"`
		CPU        *CPUUse                `json:"cpu_cores,omitempty"`
	}{o.Settings, o.Started, o.Report.Elapsed.Seconds(), o.Report.LoginTime.Seconds(), o.Report.Warmup.Seconds(), o.Report.WarmupErrors, ops,
		o.Report.TotalTPS, o.Report.Errors, o.Report.GaveUp, o.Report.Unmeasured, o.Memory, o.MoreMemory, o.CPU})
}

// opLabel is an operation's name in tables.
func opLabel(op Op) string {
	if op == OpPatron {
		return "patron scan"
	}
	return string(op)
}

func fmtMS(d time.Duration) string {
	v := ms(d)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func serverMS(s Summary) string {
	if !s.ServerKnown {
		return "-"
	}
	return fmtMS(s.ServerMedian)
}

// WriteTable prints the report as a table like FOLIO's: one row per operation,
// times in milliseconds.
func (o Output) WriteTable(w io.Writer) {
	s, r := o.Settings, o.Report
	think := "saturation (no think time)"
	if s.ThinkS > 0 {
		think = fmt.Sprintf("desk-paced (think %gs ± %.0f%%)", s.ThinkS, s.Jitter*100)
	}
	proto := s.Protocol
	if s.Desk != "" {
		proto += " (" + deskLabel(s.Desk) + ")"
	}
	fmt.Fprintf(w, "CICO over %s: %d virtual users, %d items each, %s, target %s\n", proto, s.Users, s.Items, think, s.Target)
	if s.Server != "" {
		fmt.Fprintf(w, "server: %s\n", s.Server)
	}
	if r.Warmup > 0 {
		fmt.Fprintf(w, "measured %.1fs (before it, not measured: sign-in of every user %.1fs, then a warm-up of %s with %d errors)\n\n",
			r.Elapsed.Seconds(), r.LoginTime.Seconds(), r.Warmup, r.WarmupErrors)
	} else {
		fmt.Fprintf(w, "measured %.1fs (sign-in of every user before it: %.1fs, not measured)\n\n", r.Elapsed.Seconds(), r.LoginTime.Seconds())
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tcount\tavg ms\tmedian\tp95\tp99\tmax\terrors\ttx/s\tserver app median ms\t")
	for _, op := range Ops {
		x := r.Ops[op]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t%s\t\n", opLabel(op), x.Count, fmtMS(x.Avg), fmtMS(x.Median),
			fmtMS(x.P95), fmtMS(x.P99), fmtMS(x.Max), x.Errors, x.TPS, serverMS(x))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntotal: %.1f check-outs and check-ins a second, %d errors", r.TotalTPS, r.ErrorCount())
	if o.Memory != nil {
		fmt.Fprintf(w, "; %s", o.peakMemory())
	}
	fmt.Fprintln(w)
	if o.CPU != nil {
		fmt.Fprintf(w, "CPU while measuring: %s\n", o.CPU)
	}
	if o.Postgres != nil {
		fmt.Fprintf(w, "PostgreSQL while measuring: %s\n", o.Postgres)
	}
	if o.Writes != nil {
		fmt.Fprintf(w, "Writes while measuring: %s\n", o.Writes)
	}
	if r.GaveUp > 0 {
		fmt.Fprintf(w, "%d users stopped after %d failures in a row\n", r.GaveUp, maxFailuresInRow)
	}
	for _, msg := range slices.Sorted(maps.Keys(r.Errors)) {
		fmt.Fprintf(w, "  error ×%d: %s\n", r.Errors[msg], msg)
	}
}

// peakMemory is "server peak resident memory 50 MB", or with several servers
// "servers' peak resident memory 50 + 48 MB".
func (o Output) peakMemory() string {
	if len(o.MoreMemory) == 0 {
		return "server peak resident memory " + mb(o.Memory.PeakKB)
	}
	parts := []string{fmt.Sprintf("%.0f", float64(o.Memory.PeakKB)/1024)}
	for _, m := range o.MoreMemory {
		parts = append(parts, fmt.Sprintf("%.0f", float64(m.PeakKB)/1024))
	}
	return "servers' peak resident memory " + strings.Join(parts, " + ") + " MB"
}

func mb(kb int64) string { return fmt.Sprintf("%.0f MB", float64(kb)/1024) }

// MarkdownHeader is the header of the table MarkdownRows fill.
const MarkdownHeader = "| run | operation | count | avg ms | median | p95 | p99 | max | errors | tx/s | server app median ms |\n" +
	"|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"

// MarkdownRows writes the report's rows for MarkdownHeader's table, the run named
// by label, and a total row.
func (o Output) MarkdownRows(w io.Writer, label string) {
	r := o.Report
	for _, op := range Ops {
		x := r.Ops[op]
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s | %d | %.1f | %s |\n", label, opLabel(op), x.Count, fmtMS(x.Avg),
			fmtMS(x.Median), fmtMS(x.P95), fmtMS(x.P99), fmtMS(x.Max), x.Errors, x.TPS, serverMS(x))
	}
	var notes []string
	if o.Memory != nil {
		notes = append(notes, strings.Replace(o.peakMemory(), "peak resident memory", "peak RSS", 1))
	}
	if c := o.CPU; c != nil {
		if c.Database > 0 {
			notes = append(notes, fmt.Sprintf("CPU cores: server %.1f, PostgreSQL %.1f, generator %.1f, other %.1f", c.Server, c.Database, c.Generator, c.Other))
		} else {
			notes = append(notes, fmt.Sprintf("CPU cores: server %.1f, generator %.1f, other %.1f", c.Server, c.Generator, c.Other))
		}
	}
	if len(o.Writes) > 0 {
		parts := make([]string, len(o.Writes))
		for i, ww := range o.Writes {
			parts[i] = fmtMS(msDuration(ww.MeanMS))
		}
		notes = append(notes, "writes waited (queue / lock / run / flush, mean ms): "+strings.Join(parts, " / "))
	}
	if o.Postgres != nil {
		notes = append(notes, "PostgreSQL: "+o.Postgres.String())
	}
	fmt.Fprintf(w, "| %s | **total** | %d | | | | | | %d | **%.1f** | %s |\n", label, r.Transactions(), r.ErrorCount(), r.TotalTPS,
		strings.Join(notes, "; "))
}

// deskLabel says how a desk of the named kind works the site.
func deskLabel(desk string) string {
	if desk == DeskScript.String() {
		return "the desk script: one request a scan"
	}
	return "pages: a form post and the page it leads to, a scan"
}
