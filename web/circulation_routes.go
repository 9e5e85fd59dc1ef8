package web

import (
	"crypto/rand"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// circulationRoutes mounts the desk pages: check out, check in.
func (s *Server) circulationRoutes(r chi.Router) {
	r.Get("/checkout", s.handleCheckoutPage)
	r.Post("/checkout/patron", s.handleCheckoutPatron)
	r.Post("/checkout", s.handleCheckoutItem)
	r.Post("/checkout/done", s.handleCheckoutDone)
	r.Get("/checkout/slip", s.handleCheckoutSlip)
	r.Get("/checkin", s.handleCheckinPage)
	r.Post("/checkin", s.handleCheckinItem)
	r.Post("/checkin/clear", s.handleCheckinClear)
	r.Get("/checkin/receipt", s.handleCheckinReceipt)
}

// deskVisit is the patron being served at Check out, kept in the staff session: who,
// since when (the visit's loans are those issued since), and whether staff already
// confirmed lending despite fines (asked once per visit).
type deskVisit struct {
	PatronID       int64
	Started        int64
	FinesConfirmed bool
}

const (
	sessVisit        = "visit"
	sessCheckinBatch = "checkin_batch"
)

func init() { gob.Register(deskVisit{}) }

func (s *Server) visit(r *http.Request) (deskVisit, bool) {
	v, ok := s.Sessions.Get(r.Context(), sessVisit).(deskVisit)
	return v, ok && v.PatronID != 0
}

func (s *Server) handleCheckoutPage(w http.ResponseWriter, r *http.Request) {
	v := &CheckoutView{}
	status, err := s.loadCheckoutView(r, v)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, status, CheckoutPage(s.page(r, "Check out", "checkout"), v))
}

// loadCheckoutView fills the view for the current visit, if any, in one read
// transaction.
func (s *Server) loadCheckoutView(r *http.Request, v *CheckoutView) (int, error) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		return 0, err
	}
	v.Loc, v.FinesLimit = prefs.Location, prefs.FinesLimitCents
	v.Now = s.DB.Now()
	visit, ok := s.visit(r)
	if !ok {
		return http.StatusOK, nil
	}
	v.FinesConfirmed = visit.FinesConfirmed
	err = s.DB.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		if v.Patron, v.Standing, err = patrons.FindWithStanding(tx, visit.PatronID); err != nil {
			return err
		}
		v.Visit, err = circulation.LoansIssuedSince(tx, v.Patron.ID, time.Unix(visit.Started, 0))
		return err
	})
	if stacks.ErrorCode(err) == stacks.ENOTFOUND {
		s.Sessions.Remove(r.Context(), sessVisit)
		v.Patron = nil
		return http.StatusOK, nil
	}
	return http.StatusOK, err
}

func (s *Server) handleCheckoutPatron(w http.ResponseWriter, r *http.Request) {
	input := strings.TrimSpace(r.PostFormValue("card"))
	v := &CheckoutView{Card: input}
	if input == "" {
		v.CardError = "Scan the patron's card, or type a card number or name."
		s.renderCheckoutStatus(w, r, v, http.StatusUnprocessableEntity)
		return
	}
	var found *patrons.Patron
	err := s.DB.Read(r.Context(), func(tx *db.Tx) error {
		p, err := patrons.FindByCard(tx, input)
		if err == nil {
			found = p
			return nil
		} else if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			return err
		}
		v.Matches, err = patrons.Search(tx, input, 50)
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if found == nil && len(v.Matches) == 1 {
		found = &v.Matches[0]
	}
	if found == nil {
		if len(v.Matches) == 0 {
			v.CardError = "No patron has card number “" + input + "”, and no patron's name matches. Check the card, or search on the Patrons page."
			s.renderCheckoutStatus(w, r, v, http.StatusUnprocessableEntity)
			return
		}
		s.renderCheckoutStatus(w, r, v, http.StatusOK)
		return
	}
	s.Sessions.Put(r.Context(), sessVisit, deskVisit{PatronID: found.ID, Started: s.DB.Now().Unix()})
	http.Redirect(w, r, "/checkout", http.StatusSeeOther)
}

// renderCheckoutStatus renders the card form (no visit) with v's messages.
func (s *Server) renderCheckoutStatus(w http.ResponseWriter, r *http.Request, v *CheckoutView, status int) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v.Loc, v.Now = prefs.Location, s.DB.Now()
	s.render(w, r, status, CheckoutPage(s.page(r, "Check out", "checkout"), v))
}

func (s *Server) handleCheckoutItem(w http.ResponseWriter, r *http.Request) {
	visit, ok := s.visit(r)
	if !ok {
		s.flash(r, "info", "Scan the patron's card first.")
		http.Redirect(w, r, "/checkout", http.StatusSeeOther)
		return
	}
	confirm := r.PostForm["confirm"]
	if visit.FinesConfirmed && !slices.Contains(confirm, circulation.BlockFines) {
		confirm = append(confirm, circulation.BlockFines)
	}
	u := userFrom(r.Context())
	res, err := s.Circ.Checkout(r.Context(), circulation.CheckoutRequest{
		Actor:    u.Actor(),
		PatronID: visit.PatronID,
		Barcode:  r.PostFormValue("barcode"),
		Confirm:  confirm,
	})
	var blocked *circulation.BlockedError
	switch {
	case err == nil:
		if res.Renewed {
			s.cfg.Metrics.Circulation("renew", "desk")
		} else {
			s.cfg.Metrics.Circulation("checkout", "desk")
		}
		if !visit.FinesConfirmed && slices.Contains(confirm, circulation.BlockFines) {
			visit.FinesConfirmed = true
			s.Sessions.Put(r.Context(), sessVisit, visit)
		}
		http.Redirect(w, r, "/checkout", http.StatusSeeOther)
		return
	case errors.As(err, &blocked):
		v := &CheckoutView{Blocked: blocked}
		if _, err := s.loadCheckoutView(r, v); err != nil {
			s.Error(w, r, err)
			return
		}
		status := http.StatusConflict
		if blocked.Refused() {
			status = http.StatusUnprocessableEntity
		}
		s.render(w, r, status, CheckoutPage(s.page(r, "Check out", "checkout"), v))
	case stacks.ErrorCode(err) != stacks.EINTERNAL:
		v := &CheckoutView{Barcode: r.PostFormValue("barcode"), BarcodeError: stacks.ErrorMessage(err)}
		if _, err := s.loadCheckoutView(r, v); err != nil {
			s.Error(w, r, err)
			return
		}
		s.render(w, r, errorStatus(stacks.ErrorCode(err)), CheckoutPage(s.page(r, "Check out", "checkout"), v))
	default:
		s.Error(w, r, err)
	}
}

func (s *Server) handleCheckoutDone(w http.ResponseWriter, r *http.Request) {
	s.Sessions.Remove(r.Context(), sessVisit)
	http.Redirect(w, r, "/checkout", http.StatusSeeOther)
}

func (s *Server) handleCheckoutSlip(w http.ResponseWriter, r *http.Request) {
	visit, ok := s.visit(r)
	if !ok {
		http.Redirect(w, r, "/checkout", http.StatusSeeOther)
		return
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	u := userFrom(r.Context())
	v := &SlipView{Loc: prefs.Location, Now: s.DB.Now(), Library: prefs.LibraryName, Branch: u.BranchName}
	err = s.DB.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		if v.Patron, err = patrons.FindByID(tx, visit.PatronID); err != nil {
			return err
		}
		v.Loans, err = circulation.LoansIssuedSince(tx, visit.PatronID, time.Unix(visit.Started, 0))
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, DueSlipPage(s.page(r, "Due-date slip", "checkout"), v))
}

// checkinBatch returns this session's checkin list name, creating it when asked.
func (s *Server) checkinBatch(r *http.Request, create bool) string {
	b := s.Sessions.GetString(r.Context(), sessCheckinBatch)
	if b == "" && create {
		buf := make([]byte, 12)
		rand.Read(buf)
		b = hex.EncodeToString(buf)
		s.Sessions.Put(r.Context(), sessCheckinBatch, b)
	}
	return b
}

func (s *Server) checkinView(r *http.Request, v *CheckinView) error {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		return err
	}
	v.Loc = prefs.Location
	batch := s.checkinBatch(r, false)
	if batch == "" {
		return nil
	}
	return s.DB.Read(r.Context(), func(tx *db.Tx) error {
		var err error
		v.List, err = circulation.CheckinBatch(tx, batch, 100)
		return err
	})
}

func (s *Server) handleCheckinPage(w http.ResponseWriter, r *http.Request) {
	v := &CheckinView{}
	if err := s.checkinView(r, v); err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, CheckinPage(s.page(r, "Check in", "checkin"), v))
}

func (s *Server) handleCheckinItem(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	_, err := s.Circ.Checkin(r.Context(), circulation.CheckinRequest{
		Actor:   u.Actor(),
		Barcode: r.PostFormValue("barcode"),
		Batch:   s.checkinBatch(r, true),
	})
	if err == nil {
		s.cfg.Metrics.Circulation("checkin", "desk")
		http.Redirect(w, r, "/checkin", http.StatusSeeOther)
		return
	}
	if stacks.ErrorCode(err) == stacks.EINTERNAL {
		s.Error(w, r, err)
		return
	}
	v := &CheckinView{Barcode: r.PostFormValue("barcode"), BarcodeError: stacks.ErrorMessage(err)}
	if err := s.checkinView(r, v); err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, errorStatus(stacks.ErrorCode(err)), CheckinPage(s.page(r, "Check in", "checkin"), v))
}

func (s *Server) handleCheckinClear(w http.ResponseWriter, r *http.Request) {
	s.Sessions.Remove(r.Context(), sessCheckinBatch)
	http.Redirect(w, r, "/checkin", http.StatusSeeOther)
}

func (s *Server) handleCheckinReceipt(w http.ResponseWriter, r *http.Request) {
	v := &CheckinView{}
	if err := s.checkinView(r, v); err != nil {
		s.Error(w, r, err)
		return
	}
	prefs, _ := s.preferences(r.Context())
	s.render(w, r, http.StatusOK, CheckinReceiptPage(s.page(r, "Checkin receipt", "checkin"), v, prefs.LibraryName))
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
