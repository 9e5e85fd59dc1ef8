package kit

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

var serverTimingRE = regexp.MustCompile(`^app;dur=\d+\.\d+, db;dur=\d+\.\d+, sql;desc="(\d+)", sel;desc="(\d+)"$`)

// TestServerTiming: the header is set before the status goes out, whether
// the handler writes the status or only the body.
func TestServerTiming(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"WriteHeader": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) },
		"Write":       func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) },
		"Stats": func(w http.ResponseWriter, r *http.Request) {
			if db.StatsFrom(r.Context()) == nil {
				t.Error("no statistics in the handler's context")
			}
			w.Write(nil)
		},
	} {
		w := httptest.NewRecorder()
		ServerTiming(h).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		if st := w.Result().Header.Get("Server-Timing"); !serverTimingRE.MatchString(st) {
			t.Errorf("%s: Server-Timing %q", name, st)
		}
	}
}

// TestHeaders: the security headers carry the site's policy; NoStore marks
// the answer no-store; an unknown method is a plain 405.
func TestHeaders(t *testing.T) {
	w := httptest.NewRecorder()
	SecurityHeaders("default-src 'none'")(NoStore(http.NotFoundHandler())).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	h := w.Header()
	if h.Get("Content-Security-Policy") != "default-src 'none'" || h.Get("X-Frame-Options") != "DENY" ||
		h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" || h.Get("Cache-Control") != "no-store" {
		t.Errorf("headers: %v", h)
	}
	w = httptest.NewRecorder()
	MethodNotAllowed(w, httptest.NewRequest(http.MethodDelete, "/", nil))
	if w.Code != http.StatusMethodNotAllowed || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Errorf("MethodNotAllowed: %d %v", w.Code, w.Header())
	}
}

// TestRecoverer: a panic is a logged 500 and the stack stays in the log; an
// aborted handler's panic goes on up to net/http.
func TestRecoverer(t *testing.T) {
	logger, logged := logTo()
	w := httptest.NewRecorder()
	Recoverer(logger)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })).
		ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/p", nil))
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "boom") {
		t.Errorf("panic: %d %q", w.Code, w.Body)
	}
	if !strings.Contains(logged.String(), "boom") || !strings.Contains(logged.String(), "/p") {
		t.Errorf("the panic was not logged: %s", logged)
	}
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Errorf("ErrAbortHandler: recovered %v", p)
		}
	}()
	Recoverer(logger)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}

// TestHealthz: ok while the database answers, a logged 503 once it does not.
func TestHealthz(t *testing.T) {
	d := dbtest.Open(t, db.Options{})
	logger, logged := logTo()
	w := httptest.NewRecorder()
	Healthz(d, logger)(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if w.Code != http.StatusOK || w.Body.String() != "ok\n" || w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("healthz: %d %q %v", w.Code, w.Body, w.Header())
	}
	d.Close()
	w = httptest.NewRecorder()
	Healthz(d, logger)(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(logged.String(), "health check") {
		t.Errorf("healthz on a closed database: %d %q; log %s", w.Code, w.Body, logged)
	}
}

// TestPaths: the redirect helpers put the request's base path in front.
func TestPaths(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r = r.WithContext(basepath.With(r.Context(), "/lib"))
	w := httptest.NewRecorder()
	Redirect(w, r, "/account?a=1", http.StatusSeeOther)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/lib/account?a=1" {
		t.Errorf("Redirect: %d %q", w.Code, w.Header().Get("Location"))
	}
	w = httptest.NewRecorder()
	Refresh(w, r, 2, "/jobs/3")
	if got := w.Header().Get("Refresh"); got != "2; url=/lib/jobs/3" {
		t.Errorf("Refresh: %q", got)
	}
	if got := At(r.Context(), "/records/1"); got != "/lib/records/1" {
		t.Errorf("At: %q", got)
	}
	if got := CookiePath(r); got != "/lib/" {
		t.Errorf("CookiePath: %q", got)
	}
}

// TestIsLocalPath: a few of web's TestIsLocalPath cases (which covers the
// rule in full through the staff site's sign-in), for both sites' "next".
func TestIsLocalPath(t *testing.T) {
	for in, want := range map[string]bool{
		"/": true, "/patrons?q=x": true, "/search?q=..": true,
		"": false, "//evil.example": false, "/\\evil.example": false, "/\t/evil.example": false,
		"https://evil.example/": false, "/../admin": false, "/%2e%2e/admin": false, "/\xff": false,
	} {
		if got := IsLocalPath(in); got != want {
			t.Errorf("IsLocalPath(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestFormErrors(t *testing.T) {
	e := FormErrors{"card": "Enter your card number."}
	if !e.Has("card") || e.Has("pin") || e.Get("card") != "Enter your card number." || e.Invalid("card") != "true" || e.Invalid("pin") != "false" {
		t.Errorf("FormErrors: %v", e)
	}
}

// TestBase: the middleware every answer goes through, in order: the access
// log sees the request id, a panic is a 500 that still carries Server-Timing
// and the site's policy, and Observe runs.
func TestBase(t *testing.T) {
	logger, logged := logTo()
	observed := false
	b := Base{Logger: logger, AccessLog: logger, AccessMessage: "site request", ContentSecurityPolicy: "default-src 'none'",
		Observe: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { observed = true; next.ServeHTTP(w, r) })
		}}
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	mw := b.Middleware()
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/x", nil))
	if w.Code != http.StatusInternalServerError || !serverTimingRE.MatchString(w.Header().Get("Server-Timing")) ||
		w.Header().Get("Content-Security-Policy") != "default-src 'none'" || !observed {
		t.Errorf("answer %d %v, observed %v", w.Code, w.Header(), observed)
	}
	if !regexp.MustCompile(`msg="site request" id=\S+ method=GET path=/x .*status=500`).MatchString(logged.String()) {
		t.Errorf("access log: %s", logged)
	}
}
