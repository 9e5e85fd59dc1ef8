package web

import "net/http"

// sameOrigin lets through a GET that does heavy work or writes (a report, an
// export, a labels sheet, a history) only when the browser says it was asked for
// by this site's own pages or typed or bookmarked by the user: Sec-Fetch-Site
// "same-origin" or "none". A link or image on another site ("cross-site", and
// "same-site": a sibling host is another site here, as for
// http.CrossOriginProtection) would otherwise make a signed-in browser spend a
// heavy-read slot, or write an audit row, on someone else's behalf. It is
// answered 403 with a page that says why and links to the same address: one
// deliberate click, from Stacks' own page, runs it.
//
// A request without the header (curl, a script, a browser too old to send it)
// passes: such a request carries no victim's cookie that a browser added for
// another site, and every browser Stacks supports sends the header.
func (s *Server) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Sec-Fetch-Site") {
		case "", "same-origin", "none":
			next.ServeHTTP(w, r)
			return
		}
		s.Render(w, r, http.StatusForbidden, CrossSitePage(s.page(r, "Opened from another site", ""), r.URL.RequestURI()))
	})
}
