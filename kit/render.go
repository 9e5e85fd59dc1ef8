package kit

import (
	"bytes"
	"log/slog"
	"net/http"
	"sync"

	"github.com/a-h/templ"
)

// bufPool holds render buffers: a page is rendered whole before anything is sent,
// so a template error becomes a clean 500 and Server-Timing covers the render.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Render writes component c as an HTML page with the given status. A template
// error is logged to logger and answered 500 with a plain message.
func Render(w http.ResponseWriter, r *http.Request, logger *slog.Logger, status int, c templ.Component) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if err := c.Render(r.Context(), buf); err != nil {
		logger.Error("render", "path", r.URL.Path, "err", err)
		http.Error(w, "The page could not be shown; the problem has been logged.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
