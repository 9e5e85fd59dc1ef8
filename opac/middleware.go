package opac

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/stacks-ils/stacks/kit"
)

// ContentSecurityPolicy is the patrons' site's policy: no script at all (every
// page works without JavaScript), styles and images from the site only, forms
// posted to the site only, never framed.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

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

// localPath returns next if a browser can only read it as a path on this site
// (kit.IsLocalPath, the staff site's rule), else "/account": the sign-in form
// must not become an open redirect.
func localPath(next string) string {
	if !kit.IsLocalPath(next) {
		return "/account"
	}
	return next
}
