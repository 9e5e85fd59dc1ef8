package web

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
)

// patronRoutes mounts the patron pages: search, create and edit, the patron page,
// and its actions (fines, blocks, card renewal, the message for the desk). Every
// action posts and redirects back to the patron page, or to the safe local path in
// its "return" field. Refund is for administrators; waive for the accounts allowed
// to waive (patrons.WaiveLines checks it).
func (s *Server) patronRoutes(r chi.Router) {
	r.Get("/patrons", s.handlePatronSearch)
	r.Get("/patrons/new", s.handlePatronNew)
	r.Post("/patrons", s.handlePatronCreate)
	r.Get("/patrons/{id}", s.handlePatronShow)
	r.Get("/patrons/{id}/edit", s.handlePatronEdit)
	r.Post("/patrons/{id}", s.handlePatronUpdate)
	r.Post("/patrons/{id}/pay", s.handlePatronPay)
	// A waiver forgives money: the domain refuses accounts without the waive
	// permission. Refunds hand money back: administrators only (the page hides
	// the form from circulation staff).
	r.Post("/patrons/{id}/waive", s.handlePatronWaive)
	r.With(s.requireAdmin).Post("/patrons/{id}/refund", s.handlePatronRefund)
	r.Post("/patrons/{id}/charge", s.handlePatronCharge)
	r.Post("/patrons/{id}/lost", s.handlePatronDeclareLost)
	r.Post("/patrons/{id}/claim-returned", s.handlePatronClaimReturned)
	r.Post("/patrons/{id}/block", s.handlePatronBlock)
	r.Post("/patrons/{id}/unblock", s.handlePatronUnblock)
	r.Post("/patrons/{id}/pin", s.handlePatronPIN)
	r.Post("/patrons/{id}/renew-card", s.handlePatronRenewCard)
	r.Post("/patrons/{id}/desk-message/dismiss", s.handlePatronDismissDeskMessage)
	r.Post("/patrons/{id}/renew", s.handlePatronRenewLoans)
	r.Post("/patrons/{id}/notices", s.handlePatronNoticePreferences)
	// The export writes the audit log: only from this site (sameOrigin).
	r.With(s.sameOrigin).Get("/patrons/{id}/export", s.handlePatronExport)
}

// patronID reads the {id} of a patron URL. A malformed id names no patron.
func patronID(r *http.Request) (int64, error) {
	return pathID(r, "There is no patron at "+r.URL.Path+". Search for the patron by name or card.")
}

// patronURL is the patron page's path.
func patronURL(id int64) string { return "/patrons/" + strconv.FormatInt(id, 10) }
