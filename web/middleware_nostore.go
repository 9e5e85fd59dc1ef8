package web

import "net/http"

// noStore marks every answer "Cache-Control: no-store": staff pages and the desk's
// fragments show patrons' names, addresses, loans and fines, which must not stay
// in a shared desk computer's browser cache, or a proxy's, after sign-out. The
// public assets (/static/, /favicon.ico) set their own, long, Cache-Control over
// it.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
