package kit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestRender: a page goes out whole with its status; a template that fails
// midway sends nothing of itself, a logged 500 instead.
func TestRender(t *testing.T) {
	logger, logged := logTo()
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	w := httptest.NewRecorder()
	Render(w, r, logger, http.StatusConflict, templ.Raw("<p>on loan</p>"))
	if w.Code != http.StatusConflict || w.Body.String() != "<p>on loan</p>" || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("Render: %d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body)
	}

	broken := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		io.WriteString(w, "<p>half")
		return errors.New("template broke")
	})
	w = httptest.NewRecorder()
	Render(w, r, logger, http.StatusOK, broken)
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "half") {
		t.Errorf("broken template: %d %q", w.Code, w.Body)
	}
	if !strings.Contains(logged.String(), "template broke") {
		t.Errorf("the template's error was not logged: %s", logged)
	}
}
