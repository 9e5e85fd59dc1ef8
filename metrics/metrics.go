// Package metrics exposes what the server does as Prometheus metrics: request
// durations by route and status, SQL statements by kind and the time spent in
// SQL (the counters Koha's measurement read from MySQL), the database pools,
// SIP2 message latency, checkouts and checkins, the password pool's bcrypt work
// and refusals, and the Go runtime.
//
// It writes the Prometheus text format itself instead of using the Prometheus
// client library: that library and the protobuf code under it initialise
// themselves (a default registry with runtime and process collectors, protobuf
// descriptors) in every process that links them, and every CGI request is a new
// process of this one binary that never serves metrics (they were about a
// quarter of the binary's package initialisation). Nothing here runs before New.
package metrics

import (
	"bufio"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
)

// Metrics holds the collectors of one server. A nil *Metrics records nothing, so
// callers need no checks.
type Metrics struct {
	requests   *histogramVec
	statements *counterVec
	sqlSeconds *counterVec
	sip        *histogramVec
	circ       *counterVec
	// collectors produce the families in the order they are exposed.
	collectors []func() []family
}

// New makes the collectors, with the pool and statement cache statistics of d.
func New(d *db.DB) *Metrics {
	processStart()
	m := &Metrics{
		requests: newHistogramVec("stacks_http_request_duration_seconds",
			"Time to serve HTTP requests, by route pattern, method and status.",
			[]float64{.0005, .001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2, 5}, "route", "method", "status"),
		statements: newCounterVec("stacks_sql_statements_total",
			"SQL statements run, by kind (select, insert, update, delete, other) and by what ran them (http, sip).", "kind", "source"),
		sqlSeconds: newCounterVec("stacks_sql_seconds_total",
			"Time spent inside database transactions (BEGIN to the end of COMMIT), by what ran them.", "source"),
		sip: newHistogramVec("stacks_sip_message_duration_seconds",
			"Time to answer SIP2 messages, by message type (the request's two-digit code, or other for a message the server does not answer as itself).",
			[]float64{.0002, .0005, .001, .002, .005, .01, .02, .05, .1, .5}, "message"),
		circ: newCounterVec("stacks_circulation_total",
			"Completed circulation transactions, by action (checkout, checkin, renew) and channel (desk, sip).", "action", "channel"),
	}
	m.collectors = []func() []family{
		m.requests.collect, m.statements.collect, m.sqlSeconds.collect, m.sip.collect, m.circ.collect,
		poolCollector(map[string]func() sql.DBStats{"read": d.ReadPoolStats, "write": d.WritePoolStats}),
		func() []family {
			s := d.StmtCacheStats()
			return []family{
				{name: "stacks_sql_statement_cache_hits_total", typ: "counter",
					help:    "SQL statements run from a connection's cache of compiled statements.",
					samples: []sample{{value: float64(s.Hits)}}},
				{name: "stacks_sql_statement_cache_misses_total", typ: "counter",
					help:    "SQL statements compiled to be kept in a connection's cache (SQL run only once is not kept).",
					samples: []sample{{value: float64(s.Misses)}}},
			}
		},
		writeStageCollector(d),
		passwordCollector,
		goCollector, processCollector,
	}
	return m
}

// writeStageCollector reports where the database's writes waited
// (db.WriteStages): one histogram series a stage.
func writeStageCollector(d *db.DB) func() []family {
	return func() []family {
		stages := d.WriteStages()
		if stages == nil {
			return nil
		}
		f := family{name: "stacks_db_write_stage_seconds", typ: "histogram",
			help: "Time each write spent in each stage of the group writer: queue (waiting for the batch before), lock (BEGIN and, on PostgreSQL, the write lock every server shares), run (the batch's writes to the end of COMMIT) and flush (PostgreSQL: waiting for the WAL flush that makes it durable)."}
		for _, st := range stages {
			f.samples = append(f.samples, histogramSamples([][2]string{{"stage", st.Name}}, db.WriteStageBuckets[:], st.Counts, st.Count, st.Seconds)...)
		}
		return []family{f}
	}
}

// passwordCollector reports the bcrypt work of package passwords' Default pool,
// which every sign-in, PIN check and new password or PIN of this process goes
// through: a rush of logins (self-check machines after a restart, a guessing
// burst) shows as comparisons, and a pool too small for it as refusals, which
// staff, patrons and terminals see as "busy, try again".
func passwordCollector() []family {
	return []family{
		{name: "stacks_password_hashes_total", typ: "counter",
			help:    "bcrypt hashes made for new passwords and PINs.",
			samples: []sample{{value: float64(passwords.Hashes())}}},
		{name: "stacks_password_comparisons_total", typ: "counter",
			help:    "bcrypt comparisons run to check passwords and PINs.",
			samples: []sample{{value: float64(passwords.Comparisons())}}},
		{name: "stacks_password_refused_total", typ: "counter",
			help:    "Password and PIN checks and hashes refused unrun because the bcrypt pool and its queue were full.",
			samples: []sample{{value: float64(passwords.Default.Refused())}}},
	}
}

// Handler serves the metrics in the Prometheus text format (version 0.0.4).
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		bw := bufio.NewWriter(w)
		for _, f := range m.gather() {
			f.write(bw)
		}
		bw.Flush()
	})
}

// Series is one time series as the handler exposes it, for tests and checks.
type Series struct {
	Labels map[string]string
	// Value is a counter's or a gauge's value, or a histogram's count of
	// observations.
	Value float64
}

// Series returns the series of the metric called name, nil if there is none.
func (m *Metrics) Series(name string) []Series {
	var out []Series
	for _, f := range m.gather() {
		if f.name != name {
			continue
		}
		want := ""
		if f.typ == "histogram" {
			want = "_count"
		}
		for _, s := range f.samples {
			if s.suffix != want {
				continue
			}
			labels := map[string]string{}
			for _, l := range s.labels {
				labels[l[0]] = l[1]
			}
			out = append(out, Series{Labels: labels, Value: s.value})
		}
	}
	return out
}

func (m *Metrics) gather() []family {
	var fs []family
	for _, c := range m.collectors {
		fs = append(fs, c()...)
	}
	return fs
}

// ObserveSQL adds a unit of work's statements and database time.
func (m *Metrics) ObserveSQL(source string, s *db.Stats) {
	if m == nil || s == nil {
		return
	}
	sel, ins, upd, del := s.Kinds()
	other := s.Statements() - sel - ins - upd - del
	for kind, n := range map[string]int64{"select": sel, "insert": ins, "update": upd, "delete": del, "other": other} {
		if n > 0 {
			m.statements.add(float64(n), kind, source)
		}
	}
	m.sqlSeconds.add(s.Duration().Seconds(), source)
}

// ObserveRequest records one HTTP request.
func (m *Metrics) ObserveRequest(route, method string, status int, took time.Duration, s *db.Stats) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	m.requests.observe(took.Seconds(), route, method, strconv.Itoa(status))
	m.ObserveSQL("http", s)
}

// ObserveSIP records one SIP2 message under its label: a two-digit message code
// (sip.MessageLabel gives only the codes the server answers) or "other". Anything
// else counts as "other", so that no caller can grow the label set past 101 values
// or put a label that is not text into the exposition.
func (m *Metrics) ObserveSIP(message string, took time.Duration, s *db.Stats) {
	if m == nil {
		return
	}
	if len(message) != 2 || !isDigit(message[0]) || !isDigit(message[1]) {
		message = "other"
	}
	m.sip.observe(took.Seconds(), message)
	m.ObserveSQL("sip", s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Circulation counts a completed checkout, checkin or renewal.
func (m *Metrics) Circulation(action, channel string) {
	if m == nil {
		return
	}
	m.circ.add(1, action, channel)
}

// family is one metric with its samples, ready to write.
type family struct {
	name, help, typ string
	samples         []sample
}

// sample is one line of a family: suffix is "_bucket", "_sum" or "_count" for a
// histogram's lines, empty otherwise.
type sample struct {
	suffix string
	labels [][2]string
	value  float64
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func (f family) write(w *bufio.Writer) {
	if len(f.samples) == 0 {
		return
	}
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, helpEscaper.Replace(f.help), f.name, f.typ)
	for _, s := range f.samples {
		w.WriteString(f.name + s.suffix)
		if len(s.labels) > 0 {
			w.WriteByte('{')
			for i, l := range s.labels {
				if i > 0 {
					w.WriteByte(',')
				}
				// Label values are text: invalid UTF-8 would make the exposition unreadable.
				w.WriteString(l[0] + `="` + labelEscaper.Replace(strings.ToValidUTF8(l[1], "\uFFFD")) + `"`)
			}
			w.WriteByte('}')
		}
		w.WriteByte(' ')
		w.WriteString(formatFloat(s.value))
		w.WriteByte('\n')
	}
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// labelPairs pairs label names with values.
func labelPairs(names, values []string) [][2]string {
	out := make([][2]string, len(names))
	for i := range names {
		out[i] = [2]string{names[i], values[i]}
	}
	return out
}

// counterVec is a counter with labels.
type counterVec struct {
	name, help string
	labels     []string
	mu         sync.Mutex
	series     map[string]*counterSeries
}

type counterSeries struct {
	values []string
	value  float64
}

func newCounterVec(name, help string, labels ...string) *counterVec {
	return &counterVec{name: name, help: help, labels: labels, series: map[string]*counterSeries{}}
}

func (c *counterVec) add(v float64, values ...string) {
	key := strings.Join(values, "\xff")
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.series[key]
	if s == nil {
		s = &counterSeries{values: values}
		c.series[key] = s
	}
	s.value += v
}

func (c *counterVec) collect() []family {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := family{name: c.name, help: c.help, typ: "counter"}
	for _, key := range slices.Sorted(maps.Keys(c.series)) {
		s := c.series[key]
		f.samples = append(f.samples, sample{labels: labelPairs(c.labels, s.values), value: s.value})
	}
	return []family{f}
}

// histogramVec is a histogram with labels.
type histogramVec struct {
	name, help string
	labels     []string
	buckets    []float64
	mu         sync.Mutex
	series     map[string]*histogramSeries
}

type histogramSeries struct {
	values []string
	counts []uint64 // per bucket, not cumulative
	count  uint64
	sum    float64
}

func newHistogramVec(name, help string, buckets []float64, labels ...string) *histogramVec {
	return &histogramVec{name: name, help: help, labels: labels, buckets: buckets, series: map[string]*histogramSeries{}}
}

func (h *histogramVec) observe(v float64, values ...string) {
	key := strings.Join(values, "\xff")
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.series[key]
	if s == nil {
		s = &histogramSeries{values: values, counts: make([]uint64, len(h.buckets))}
		h.series[key] = s
	}
	if i, _ := slices.BinarySearch(h.buckets, v); i < len(h.buckets) {
		s.counts[i]++
	}
	s.count++
	s.sum += v
}

func (h *histogramVec) collect() []family {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := family{name: h.name, help: h.help, typ: "histogram"}
	for _, key := range slices.Sorted(maps.Keys(h.series)) {
		s := h.series[key]
		f.samples = append(f.samples, histogramSamples(labelPairs(h.labels, s.values), h.buckets, s.counts, s.count, s.sum)...)
	}
	return []family{f}
}

// histogramSamples are one histogram series' samples: counts per bucket (not
// cumulative) under bounds, then the count and the sum of every observation.
func histogramSamples(labels [][2]string, bounds []float64, counts []uint64, count uint64, sum float64) []sample {
	var out []sample
	var cum uint64
	for i, le := range bounds {
		cum += counts[i]
		out = append(out, sample{suffix: "_bucket", labels: append(slices.Clip(labels), [2]string{"le", formatFloat(le)}), value: float64(cum)})
	}
	return append(out,
		sample{suffix: "_bucket", labels: append(slices.Clip(labels), [2]string{"le", "+Inf"}), value: float64(count)},
		sample{suffix: "_sum", labels: labels, value: sum},
		sample{suffix: "_count", labels: labels, value: float64(count)})
}

// poolCollector reports database/sql pools' statistics, one series per pool.
func poolCollector(pools map[string]func() sql.DBStats) func() []family {
	names := slices.Sorted(maps.Keys(pools))
	return func() []family {
		defs := []struct {
			name, help, typ string
			value           func(sql.DBStats) float64
		}{
			{"open_connections", "Open connections.", "gauge", func(s sql.DBStats) float64 { return float64(s.OpenConnections) }},
			{"in_use_connections", "Connections in use.", "gauge", func(s sql.DBStats) float64 { return float64(s.InUse) }},
			{"idle_connections", "Idle connections.", "gauge", func(s sql.DBStats) float64 { return float64(s.Idle) }},
			{"max_open_connections", "The pool's size.", "gauge", func(s sql.DBStats) float64 { return float64(s.MaxOpenConnections) }},
			{"wait_total", "Times a caller waited for a connection.", "counter", func(s sql.DBStats) float64 { return float64(s.WaitCount) }},
			{"wait_seconds_total", "Time callers waited for a connection.", "counter", func(s sql.DBStats) float64 { return s.WaitDuration.Seconds() }},
		}
		stats := make([]sql.DBStats, len(names))
		for i, n := range names {
			stats[i] = pools[n]()
		}
		var fs []family
		for _, def := range defs {
			f := family{name: "stacks_db_pool_" + def.name, help: def.help, typ: def.typ}
			for i, n := range names {
				f.samples = append(f.samples, sample{labels: [][2]string{{"pool", n}}, value: def.value(stats[i])})
			}
			fs = append(fs, f)
		}
		return fs
	}
}

// goCollector reports the Go runtime's figures under the names the Prometheus
// client uses for them.
func goCollector() []family {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	one := func(name, typ, help string, v float64) family {
		return family{name: name, typ: typ, help: help, samples: []sample{{value: v}}}
	}
	return []family{
		one("go_goroutines", "gauge", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		{name: "go_info", typ: "gauge", help: "Information about the Go environment.",
			samples: []sample{{labels: [][2]string{{"version", runtime.Version()}}, value: 1}}},
		one("go_memstats_alloc_bytes", "gauge", "Number of bytes allocated in heap and currently in use.", float64(ms.HeapAlloc)),
		one("go_memstats_alloc_bytes_total", "counter", "Total number of bytes allocated in heap until now, even if released already.", float64(ms.TotalAlloc)),
		one("go_memstats_sys_bytes", "gauge", "Number of bytes obtained from system.", float64(ms.Sys)),
		one("go_memstats_heap_objects", "gauge", "Number of currently allocated objects.", float64(ms.HeapObjects)),
		one("go_memstats_next_gc_bytes", "gauge", "Number of heap bytes when next garbage collection will take place.", float64(ms.NextGC)),
		one("go_gc_cycles_total", "counter", "Completed garbage collection cycles.", float64(ms.NumGC)),
		one("go_gc_pause_seconds_total", "counter", "Time the garbage collector stopped the world.", float64(ms.PauseTotalNs)/1e9),
		one("go_threads", "gauge", "Number of OS threads created.", float64(threads())),
	}
}

func threads() int {
	n, _ := runtime.ThreadCreateProfile(nil)
	return n
}

// processStart is when New was first called, close enough to the process's start
// for process_start_time_seconds.
var processStart = sync.OnceValue(time.Now)

// processCollector reports the process's CPU time, memory and open files, under
// the Prometheus client's names; the memory and file figures only where /proc is.
func processCollector() []family {
	var fs []family
	one := func(name, typ, help string, v float64) {
		fs = append(fs, family{name: name, typ: typ, help: help, samples: []sample{{value: v}}})
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		one("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpu.Seconds())
	}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseFloat(f[1], 64); err == nil {
				one("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", pages*float64(os.Getpagesize()))
			}
		}
	}
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		one("process_open_fds", "gauge", "Number of open file descriptors.", float64(len(ents)))
	}
	one("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", float64(processStart().Unix()))
	return fs
}
