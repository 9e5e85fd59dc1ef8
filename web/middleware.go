package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/db"
)

// timingWriter adds the Server-Timing header just before the status line goes out,
// when the handler (and the session commit) are done.
type timingWriter struct {
	http.ResponseWriter
	start  time.Time
	stats  *db.Stats
	status int
}

func (w *timingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		app := time.Since(w.start)
		selects, _, _, _ := w.stats.Kinds()
		w.Header().Set("Server-Timing", fmt.Sprintf(`app;dur=%.3f, db;dur=%.3f, sql;desc="%d", sel;desc="%d"`,
			float64(app.Microseconds())/1000, float64(w.stats.Duration().Microseconds())/1000, w.stats.Statements(), selects))
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *timingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *timingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serverTiming counts the request's database work and reports it, with the time in
// the handler, in the Server-Timing header: app (ms in the handler), db (ms inside
// database transactions), sql (statements run) and sel (of which SELECTs, the
// figure Koha's measurement counted).
func serverTiming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, stats := db.WithStats(db.WithRequestVersions(r.Context()))
		tw := &timingWriter{ResponseWriter: w, start: time.Now(), stats: stats}
		next.ServeHTTP(tw, r.WithContext(ctx))
	})
}

// accessLog logs one line per request. It is only installed when asked for, so it
// costs nothing when off.
func accessLog(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			route := chi.RouteContext(r.Context()).RoutePattern()
			logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
				slog.String("id", middleware.GetReqID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", basepath.URL(r.Context(), r.URL.Path)), // as the browser asked, base path included
				slog.String("route", route),
				slog.Int("status", ww.Status()),
				slog.Int("bytes", ww.BytesWritten()),
				slog.Duration("dur", time.Since(start)),
				slog.Int64("sql", db.StatsFrom(r.Context()).Statements()),
				slog.String("remote", r.RemoteAddr),
			)
		})
	}
}

// recoverer turns a panic into a logged 500 page; the process keeps serving.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.Logger.Error("panic in handler", "method", r.Method, "path", r.URL.Path,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprintln(w, "Something went wrong on our side; the problem has been logged. Please try again.")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// securityHeaders sets the headers every page carries: no inline script, no framing,
// no MIME sniffing, no full URLs in referrers.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

func itoa(n int) string { return strconv.Itoa(n) }
