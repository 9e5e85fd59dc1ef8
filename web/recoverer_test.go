package web_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/stackstest"
	"github.com/stacks-ils/stacks/web"
)

// TestRecoverer: a handler that panics is answered with a 500 page that gives
// nothing away, the panic and its stack go to the log, and the server goes on
// serving.
func TestRecoverer(t *testing.T) {
	e := newEnv(t)
	var logs stackstest.Buffer
	s := web.New(web.Config{DB: e.DB, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	r := s.Router()
	r.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("secret internal detail") })
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + "/boom")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body.String(), "Something went wrong") {
		t.Fatalf("panicking handler: %d %q", resp.StatusCode, body.String())
	}
	if strings.Contains(body.String(), "secret internal detail") {
		t.Error("the 500 page shows the panic's value")
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("the 500 page lacks the security headers: %v", resp.Header)
	}
	if !strings.Contains(logs.String(), "panic in handler") || !strings.Contains(logs.String(), "secret internal detail") ||
		!strings.Contains(logs.String(), "goroutine") {
		t.Errorf("the panic and its stack are not logged:\n%s", logs.String())
	}
	resp, err = http.Get(srv.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("after the panic: /healthz %v %v", resp, err)
	}
	resp.Body.Close()
}
