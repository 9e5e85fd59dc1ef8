package web

import (
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/stacks-ils/stacks/db"
)

// observe records each request in the metrics: its route pattern, status,
// duration and SQL. Installed only when metrics are on.
func (s *Server) observe(next http.Handler) http.Handler {
	m := s.cfg.Metrics
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := ""
		if rc := chi.RouteContext(r.Context()); rc != nil {
			route = rc.RoutePattern()
		}
		m.ObserveRequest(route, r.Method, ww.Status(), time.Since(start), db.StatsFrom(r.Context()))
	})
}

// metricsAllowed reports whether the request comes from an address allowed to
// scrape the metrics without signing in.
func (s *Server) metricsAllowed(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	for _, p := range s.cfg.MetricsAllow {
		if p.Contains(addr.Unmap()) {
			return true
		}
	}
	return false
}

// handleMetrics serves /metrics to the configured scraper addresses and to
// signed-in administrators.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Metrics == nil {
		http.Error(w, "Metrics are off on this server.", http.StatusNotFound)
		return
	}
	if !s.metricsAllowed(r) {
		u, reason, err := s.currentUser(r)
		switch {
		case err != nil:
			s.Error(w, r, err)
			return
		case u == nil:
			s.redirectToLogin(w, r, reason)
			return
		case !u.IsAdmin():
			http.Error(w, "Metrics are for administrators and the configured scraper addresses.", http.StatusForbidden)
			return
		}
	}
	s.cfg.Metrics.Handler().ServeHTTP(w, r)
}
