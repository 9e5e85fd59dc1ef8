package opac

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/db"
)

// The middleware below repeats a few lines of package web's rather than share
// them: the two sites must be able to change independently, and importing web
// would bring its routes within reach of this one.

// timingWriter adds the Server-Timing header just before the status line goes
// out, when the handler and the session commit are done.
type timingWriter struct {
	http.ResponseWriter
	start  time.Time
	stats  *db.Stats
	status int
}

func (w *timingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		selects, _, _, _ := w.stats.Kinds()
		w.Header().Set("Server-Timing", fmt.Sprintf(`app;dur=%.3f, db;dur=%.3f, sql;desc="%d", sel;desc="%d"`,
			float64(time.Since(w.start).Microseconds())/1000, float64(w.stats.Duration().Microseconds())/1000, w.stats.Statements(), selects))
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

// serverTiming reports the request's time in the handler, in SQL, and its SQL
// statements in the Server-Timing header, as the staff site does
// (docs/desk-session.md).
func serverTiming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, stats := db.WithStats(r.Context())
		next.ServeHTTP(&timingWriter{ResponseWriter: w, start: time.Now(), stats: stats}, r.WithContext(ctx))
	})
}

// accessLog logs one line per request.
func accessLog(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			logger.LogAttrs(r.Context(), slog.LevelInfo, "opac request",
				slog.String("id", middleware.GetReqID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", basepath.URL(r.Context(), r.URL.Path)), // as the browser asked, base path included
				slog.String("route", chi.RouteContext(r.Context()).RoutePattern()),
				slog.Int("status", ww.Status()),
				slog.Duration("dur", time.Since(start)),
				slog.Int64("sql", db.StatsFrom(r.Context()).Statements()),
				slog.String("remote", r.RemoteAddr),
			)
		})
	}
}

// ContentSecurityPolicy is the patrons' site's policy: no script at all (every
// page works without JavaScript), styles and images from the site only, forms
// posted to the site only, never framed.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// securityHeaders sets the headers every answer carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// noStore keeps pages out of caches: My account shows a patron's loans, holds
// and fines, which must not stay in a library computer's browser cache after
// sign-out; the catalogue pages show who is signed in.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// maxFormBody bounds a request body: no patron form comes near 64 KB.
const maxFormBody = 64 << 10

// limitBody refuses a body over maxFormBody (413) and a form that cannot be
// parsed (400) before any handler runs; handlers then read the parsed form.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > maxFormBody {
			http.Error(w, "That form is too large to send.", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
		if err := r.ParseForm(); err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "That form is too large to send.", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "The form could not be read. Go back and send it again.", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuseNUL answers 400 to a request whose query or form holds a NUL byte
// (%00) in a name or a value: no field of the patrons' pages takes one, and
// PostgreSQL refuses it in text, so it must not reach a statement (a 500 there,
// a silent non-match on SQLite). It runs after limitBody, which parsed a POST's
// form. OAI-PMH is left to answer badArgument itself.
func refuseNUL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hasNUL(r.URL.Query()) || hasNUL(r.PostForm) {
			http.Error(w, "The request holds a NUL character (%00), which no field takes. Go back and send it again without it.", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hasNUL reports whether a name or value of v holds a NUL byte.
func hasNUL(v url.Values) bool {
	for k, vs := range v {
		if strings.IndexByte(k, 0) >= 0 {
			return true
		}
		for _, s := range vs {
			if strings.IndexByte(s, 0) >= 0 {
				return true
			}
		}
	}
	return false
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// localPath returns next if a browser can only read it as a path on this site,
// else "/": the sign-in form must not become an open redirect. (The same rule
// as the staff site's isLocalPath: browsers drop tabs and line breaks and read
// a backslash as a slash, so anything they might rewrite is refused.) next is
// a routed path, sent under the site's base path: a "." or ".." segment, which
// a browser would resolve to a page outside the base, is refused too.
func localPath(next string) string {
	if len(next) == 0 || next[0] != '/' || strings.HasPrefix(next, "//") || !utf8.ValidString(next) {
		return "/account"
	}
	for _, r := range next {
		if r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) {
			return "/account"
		}
	}
	u, err := url.Parse(next)
	if err != nil || hasDotSegment(u.Path) || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(u.EscapedPath(), "/") || strings.HasPrefix(u.EscapedPath(), "//") {
		return "/account"
	}
	return next
}

// hasDotSegment reports whether the (decoded) path has a "." or ".." segment.
func hasDotSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
