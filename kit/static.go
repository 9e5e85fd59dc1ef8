package kit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"sync"
	"time"
)

// Static serves a site's embedded assets (its stylesheets, scripts and icon)
// under /static/ and the icon at /favicon.ico. Each site embeds its own files.
type Static struct {
	files   fs.FS
	version func() string
}

// NewStatic serves the files under dir of fsys (an embed.FS).
func NewStatic(fsys fs.FS, dir string) *Static {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic("kit: static files: " + err.Error())
	}
	return &Static{files: sub, version: sync.OnceValue(func() string { return hashFiles(sub) })}
}

// hashFiles is a short hash of the files of fsys.
func hashFiles(fsys fs.FS) string {
	h := sha256.New()
	fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(fsys, path)
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// URL returns the cache-busting routed URL of the asset name: a short hash of
// the assets is appended, so that browsers may cache them for a year and still
// see a new release at once.
func (s *Static) URL(name string) string { return "/static/" + name + "?v=" + s.version() }

// Handler serves the assets at /static/<name>, each cached for a year. It
// serves files only: a directory (/static/ itself) is a 404, not a listing, and
// so is a name that is not there, without the long cache.
func (s *Static) Handler() http.Handler {
	files := http.FileServerFS(s.files)
	return http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fi, err := fs.Stat(s.files, r.URL.Path); err != nil || !fi.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		files.ServeHTTP(w, r)
	}))
}

// Favicon serves the asset favicon.ico at /favicon.ico, where browsers ask for
// it whatever a page links (a login page, a PDF, a JSON answer), so that no
// request for it ends in a 404. Pages link the versioned /static/ URL. It
// panics if there is no favicon.ico: a build without it is broken.
func (s *Static) Favicon() http.HandlerFunc {
	icon, err := fs.ReadFile(s.files, "favicon.ico")
	if err != nil {
		panic("kit: favicon.ico is not embedded: " + err.Error())
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/x-icon")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		http.ServeContent(w, r, "favicon.ico", time.Time{}, bytes.NewReader(icon))
	}
}
