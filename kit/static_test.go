package kit

import (
	"embed"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

//go:embed testdata/static
var testFS embed.FS

// TestStatic: assets are served with a year's cache under a versioned URL;
// a directory or a missing name is a 404 without it; the icon is served at
// /favicon.ico.
func TestStatic(t *testing.T) {
	s := NewStatic(testFS, "testdata/static")
	if u := s.URL("site.css"); u != "/static/site.css?v="+s.Version() || len(s.Version()) != 12 {
		t.Errorf("URL: %q", u)
	}
	h := s.Handler()
	for path, want := range map[string]int{
		"/static/site.css":  http.StatusOK,
		"/static/sub/a.txt": http.StatusOK,
		"/static/":          http.StatusNotFound,
		"/static/sub":       http.StatusNotFound,
		"/static/none.css":  http.StatusNotFound,
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		immutable := strings.Contains(w.Header().Get("Cache-Control"), "immutable")
		if w.Code != want || immutable != (want == http.StatusOK) {
			t.Errorf("GET %s: %d, Cache-Control %q", path, w.Code, w.Header().Get("Cache-Control"))
		}
	}
	w := httptest.NewRecorder()
	s.Favicon()(w, httptest.NewRequest(http.MethodGet, "/favicon.ico", nil))
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "image/x-icon" || !strings.HasSuffix(w.Body.String(), "icon") {
		t.Errorf("favicon: %d %v", w.Code, w.Header())
	}
}
