// Package metrics exposes what the server does as Prometheus metrics: request
// durations by route and status, SQL statements by kind and the time spent in
// SQL (the counters Koha's measurement read from MySQL), the database pools,
// SIP2 message latency, checkouts and checkins, and the Go runtime.
package metrics

import (
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stacks-ils/stacks/db"
)

// Metrics holds the collectors of one server. A nil *Metrics records nothing, so
// callers need no checks.
type Metrics struct {
	registry   *prometheus.Registry
	requests   *prometheus.HistogramVec
	statements *prometheus.CounterVec
	sqlSeconds *prometheus.CounterVec
	sip        *prometheus.HistogramVec
	circ       *prometheus.CounterVec
}

// New registers the collectors, with the pool statistics of d.
func New(d *db.DB) *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		registry: r,
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "stacks_http_request_duration_seconds",
			Help:    "Time to serve HTTP requests, by route pattern, method and status.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2, 5},
		}, []string{"route", "method", "status"}),
		statements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stacks_sql_statements_total",
			Help: "SQL statements run, by kind (select, insert, update, delete, other) and by what ran them (http, sip).",
		}, []string{"kind", "source"}),
		sqlSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stacks_sql_seconds_total",
			Help: "Time spent inside database transactions (BEGIN to the end of COMMIT), by what ran them.",
		}, []string{"source"}),
		sip: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "stacks_sip_message_duration_seconds",
			Help:    "Time to answer SIP2 messages, by message type (the request's two-digit code, or other for a message the server does not answer as itself).",
			Buckets: []float64{.0002, .0005, .001, .002, .005, .01, .02, .05, .1, .5},
		}, []string{"message"}),
		circ: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stacks_circulation_total",
			Help: "Completed circulation transactions, by action (checkout, checkin, renew) and channel (desk, sip).",
		}, []string{"action", "channel"}),
	}
	r.MustRegister(m.requests, m.statements, m.sqlSeconds, m.sip, m.circ,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newPoolCollector("read", d.ReadPoolStats),
		newPoolCollector("write", d.WritePoolStats),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "stacks_sql_statement_cache_hits_total",
			Help: "SQL statements run from a connection's cache of compiled statements.",
		}, func() float64 { return float64(d.StmtCacheStats().Hits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "stacks_sql_statement_cache_misses_total",
			Help: "SQL statements compiled to be kept in a connection's cache (SQL run only once is not kept).",
		}, func() float64 { return float64(d.StmtCacheStats().Misses) }),
	)
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Registry returns the registry, for tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// ObserveSQL adds a unit of work's statements and database time.
func (m *Metrics) ObserveSQL(source string, s *db.Stats) {
	if m == nil || s == nil {
		return
	}
	sel, ins, upd, del := s.Kinds()
	other := s.Statements() - sel - ins - upd - del
	for kind, n := range map[string]int64{"select": sel, "insert": ins, "update": upd, "delete": del, "other": other} {
		if n > 0 {
			m.statements.WithLabelValues(kind, source).Add(float64(n))
		}
	}
	m.sqlSeconds.WithLabelValues(source).Add(s.Duration().Seconds())
}

// ObserveRequest records one HTTP request.
func (m *Metrics) ObserveRequest(route, method string, status int, took time.Duration, s *db.Stats) {
	if m == nil {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Observe(took.Seconds())
	m.ObserveSQL("http", s)
}

// ObserveSIP records one SIP2 message under its label: a two-digit message code
// (sip.MessageLabel gives only the codes the server answers) or "other". Anything
// else counts as "other", so that no caller can grow the label set past 101 values
// or hand Prometheus a label that is not text, which it refuses with a panic.
func (m *Metrics) ObserveSIP(message string, took time.Duration, s *db.Stats) {
	if m == nil {
		return
	}
	if len(message) != 2 || !isDigit(message[0]) || !isDigit(message[1]) {
		message = "other"
	}
	m.sip.WithLabelValues(message).Observe(took.Seconds())
	m.ObserveSQL("sip", s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Circulation counts a completed checkout, checkin or renewal.
func (m *Metrics) Circulation(action, channel string) {
	if m == nil {
		return
	}
	m.circ.WithLabelValues(action, channel).Inc()
}

// poolCollector reports a database/sql pool's statistics.
type poolCollector struct {
	stats                                           func() sql.DBStats
	open, inUse, idle, maxOpen, waitCount, waitSecs *prometheus.Desc
}

func newPoolCollector(pool string, stats func() sql.DBStats) *poolCollector {
	l := prometheus.Labels{"pool": pool}
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("stacks_db_pool_"+name, help, nil, l)
	}
	return &poolCollector{stats: stats,
		open:      d("open_connections", "Open connections."),
		inUse:     d("in_use_connections", "Connections in use."),
		idle:      d("idle_connections", "Idle connections."),
		maxOpen:   d("max_open_connections", "The pool's size."),
		waitCount: d("wait_total", "Times a caller waited for a connection."),
		waitSecs:  d("wait_seconds_total", "Time callers waited for a connection."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.open, c.inUse, c.idle, c.maxOpen, c.waitCount, c.waitSecs} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(s.OpenConnections))
	ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(s.InUse))
	ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(s.Idle))
	ch <- prometheus.MustNewConstMetric(c.maxOpen, prometheus.GaugeValue, float64(s.MaxOpenConnections))
	ch <- prometheus.MustNewConstMetric(c.waitCount, prometheus.CounterValue, float64(s.WaitCount))
	ch <- prometheus.MustNewConstMetric(c.waitSecs, prometheus.CounterValue, s.WaitDuration.Seconds())
}
