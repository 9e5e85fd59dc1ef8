package web

import (
	"net/http"
	"strconv"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
)

// handlePatronRenewLoans renews one loan (the row's Renew button), the selected
// loans, or all of them, and reports each outcome on the patron page.
func (s *Server) handlePatronRenewLoans(w http.ResponseWriter, r *http.Request) {
	id, err := patronID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	req := circulation.RenewRequest{Actor: userFrom(r.Context()).Actor(), PatronID: id, All: r.PostForm.Get("all") != ""}
	ids := r.PostForm["loan"]
	if one := r.PostForm.Get("one"); one != "" {
		ids = []string{one}
	}
	for _, raw := range ids {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n <= 0 {
			s.Error(w, r, stacks.Errorf(stacks.EINVALID, "That is not a loan of this patron; reload the page and try again."))
			return
		}
		req.LoanIDs = append(req.LoanIDs, n)
	}
	results, err := s.Circ.Renew(r.Context(), req)
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		s.Flash(r, "error", stacks.ErrorMessage(err))
	}
	for _, res := range results {
		kind := "ok"
		if !res.OK {
			kind = "warn"
		} else {
			s.cfg.Metrics.Circulation("renew", "desk")
		}
		msg := res.Message
		if res.Overridable {
			msg += " Staff may renew it anyway at Check out (Renew, then Renew anyway, with a reason)."
		}
		if res.FineCents > 0 {
			msg += " An overdue fine of " + formatMoney(res.FineCents) + " was charged."
		}
		s.Flash(r, kind, msg)
	}
	redirect(w, r, patronURL(id), http.StatusSeeOther)
}
