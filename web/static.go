package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"sync"
	"time"
)

//go:embed static
var staticFS embed.FS

// staticVersion is a short hash of the embedded assets, appended to their URLs so
// that browsers may cache them for a year and still see a new release at once.
var staticVersion = sync.OnceValue(func() string {
	h := sha256.New()
	fs.WalkDir(staticFS, "static", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := staticFS.ReadFile(path)
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
})

// staticURL returns the cache-busting URL of an embedded asset.
func staticURL(name string) string { return "/static/" + name + "?v=" + staticVersion() }

// staticHandler serves the embedded assets, each cached for a year. It serves
// files only: a directory (/static/ itself) is a 404, not a listing, and so is a
// name that is not there, without the long cache.
func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.FileServerFS(sub)
	return http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fi, err := fs.Stat(sub, r.URL.Path); err != nil || !fi.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		files.ServeHTTP(w, r)
	}))
}

// htmxFile is htmx (2.0.11, BSD Zero Clause licence, from npm's htmx.org), which
// the desk script uses to send scans and swap their answers into the page.
const htmxFile = "htmx-2.0.11.min.js"

// htmxConfig is read by htmx at load: no eval and no inline styles (the CSP
// forbids both), and the desk's refusals (404, 409, 422) are answers to show,
// not errors; a server error or a time-out leaves the scan marked as failed.
const htmxConfig = `{"allowEval":false,"allowScriptTags":false,"includeIndicatorStyles":false,"historyEnabled":false,"timeout":20000,` +
	`"responseHandling":[{"code":"204","swap":false},{"code":"[23]..","swap":true},{"code":"(404|409|422)","swap":true,"error":false},{"code":"[45]..","swap":false,"error":true}]}`

// faviconHandler serves the embedded icon at /favicon.ico, where browsers ask
// for it whatever a page links (the login page, a PDF, a JSON answer), so that
// no request for it ends in a 404. Pages link the versioned /static/ URL.
func faviconHandler() http.HandlerFunc {
	icon, err := staticFS.ReadFile("static/favicon.ico")
	if err != nil {
		panic("web: favicon.ico is not embedded: " + err.Error())
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/x-icon")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		http.ServeContent(w, r, "favicon.ico", time.Time{}, bytes.NewReader(icon))
	}
}
