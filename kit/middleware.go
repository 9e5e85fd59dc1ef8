package kit

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/db"
)

// Base describes the middleware every answer of a site goes through.
type Base struct {
	// Logger logs panics.
	Logger *slog.Logger
	// AccessLog, if set, logs one line per request, with the message
	// AccessMessage.
	AccessLog     *slog.Logger
	AccessMessage string
	// Observe, if set, is the site's metrics middleware, inside Server-Timing.
	Observe func(http.Handler) http.Handler
	// ContentSecurityPolicy is the site's policy (SecurityHeaders).
	ContentSecurityPolicy string
}

// Middleware returns the middleware, outermost first: Server-Timing, Observe,
// a request id, the access log, panics turned into logged 500s, and the
// security headers.
func (b Base) Middleware() []func(http.Handler) http.Handler {
	mw := []func(http.Handler) http.Handler{ServerTiming}
	if b.Observe != nil {
		mw = append(mw, b.Observe)
	}
	mw = append(mw, middleware.RequestID)
	if b.AccessLog != nil {
		mw = append(mw, AccessLog(b.AccessLog, b.AccessMessage))
	}
	return append(mw, Recoverer(b.Logger), SecurityHeaders(b.ContentSecurityPolicy))
}

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

// ServerTiming counts the request's database work and reports it, with the time
// in the handler, in the Server-Timing header: app (ms in the handler), db (ms
// inside database transactions), sql (statements run) and sel (of which
// SELECTs, the figure Koha's measurement counted). docs/desk-session.md reads it.
func ServerTiming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, stats := db.WithStats(db.WithRequestVersions(r.Context()))
		tw := &timingWriter{ResponseWriter: w, start: time.Now(), stats: stats}
		next.ServeHTTP(tw, r.WithContext(ctx))
	})
}

// AccessLog logs one line per request, with the message msg. A site installs it
// only when asked for, so it costs nothing when off.
func AccessLog(logger *slog.Logger, msg string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			route := chi.RouteContext(r.Context()).RoutePattern()
			logger.LogAttrs(r.Context(), slog.LevelInfo, msg,
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

// Recoverer turns a panic into a logged 500; the process keeps serving.
func Recoverer(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					logger.Error("panic in handler", "method", r.Method, "path", r.URL.Path,
						"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					w.Header().Set("Content-Type", "text/plain; charset=utf-8")
					w.WriteHeader(http.StatusInternalServerError)
					fmt.Fprintln(w, "Something went wrong on our side; the problem has been logged. Please try again.")
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// SecurityHeaders sets the headers every answer carries: the site's
// Content-Security-Policy csp, no framing, no MIME sniffing, no full URLs in
// referrers.
func SecurityHeaders(csp string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Security-Policy", csp)
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "same-origin")
			h.Set("X-Frame-Options", "DENY")
			next.ServeHTTP(w, r)
		})
	}
}

// NoStore marks every answer "Cache-Control: no-store": both sites show people's
// names, loans and fines, which must not stay in a shared computer's browser
// cache, or a proxy's, after sign-out. The public assets (Static) set their own,
// long, Cache-Control over it.
func NoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// MethodNotAllowed answers a method a route does not take, in plain text.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusMethodNotAllowed)
	w.Write([]byte("That action is not allowed on this page.\n"))
}

// Healthz answers "ok" when the database answers a query, else 503 (logged to
// logger); never cached.
func Healthz(d *db.DB, logger *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := d.Read(r.Context(), func(tx *db.Tx) error {
			var one int
			return tx.QueryRow(`SELECT 1`).Scan(&one)
		})
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err != nil {
			logger.Error("health check", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("database unavailable\n"))
			return
		}
		w.Write([]byte("ok\n"))
	}
}
