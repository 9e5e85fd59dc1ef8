package opac

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

// The patrons' site's own assets: its stylesheet and icon, nothing else (no
// script: every page works without JavaScript).
//
//go:embed static
var staticFS embed.FS

// staticVersion is a short hash of the embedded assets, appended to their URLs
// so that browsers may cache them for a year and still see a new release at once.
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

// staticHandler serves the embedded assets, each cached for a year; a directory
// or an unknown name is a 404.
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

// faviconHandler serves the icon at /favicon.ico, where browsers ask for it.
func faviconHandler() http.HandlerFunc {
	icon, err := staticFS.ReadFile("static/favicon.ico")
	if err != nil {
		panic("opac: favicon.ico is not embedded: " + err.Error())
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/x-icon")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		http.ServeContent(w, r, "favicon.ico", time.Time{}, bytes.NewReader(icon))
	}
}
