package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/patrons"
)

// patronSearchLimit is how many patrons a search lists; staff narrow a longer list
// by typing more of the name.
const patronSearchLimit = 50

// PatronSearchView is the patron search page's view model.
type PatronSearchView struct {
	Query    string
	Searched bool
	Results  []patrons.Patron
	// More is set when the search found more patrons than it lists.
	More     bool
	Location *time.Location
	// Today is now in the library's time zone, for marking expired cards.
	Today time.Time
}

// handlePatronSearch lists the patrons that match q by name ("Reader, Alex"),
// card or part of it, phone number or e-mail address (patrons.Search). A card number
// that matches exactly goes straight to that patron, as a scanned card should.
func (s *Server) handlePatronSearch(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := PatronSearchView{Query: strings.TrimSpace(r.URL.Query().Get("q")), Location: prefs.Location}
	if v.Query != "" {
		v.Searched = true
		var now time.Time
		v.Results, now, err = s.patrons.form.Find(r.Context(), v.Query, patronSearchLimit+1)
		v.Today = now.In(prefs.Location)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		// Search puts an exact card match first.
		if len(v.Results) > 0 && strings.EqualFold(v.Results[0].Card, v.Query) {
			redirect(w, r, patronURL(v.Results[0].ID), http.StatusSeeOther)
			return
		}
		if len(v.Results) > patronSearchLimit {
			v.Results, v.More = v.Results[:patronSearchLimit], true
		}
	}
	s.Render(w, r, http.StatusOK, PatronSearchPage(s.page(r, "Patrons", "patrons"), v))
}
