package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/patrons"
)

const (
	// checkinShown is how many returns the Check in page lists (the latest of each
	// item); the receipt has them all.
	checkinShown = 30
	// checkinRead bounds the rows read to find them.
	checkinRead = 500
	// checkinReceiptMax bounds a receipt.
	checkinReceiptMax = 10000
)

// checkinService is what the Check in page asks of circulation.
type checkinService interface {
	Checkin(ctx context.Context, req circulation.CheckinRequest) (circulation.CheckinResult, error)
	CheckinList(ctx context.Context, batch string, limit int) (list, pending []circulation.CheckinResult, err error)
	CheckinsToAcknowledge(ctx context.Context, batch string) ([]circulation.CheckinResult, error)
	AcknowledgeCheckin(ctx context.Context, actor stacks.Actor, batch string, id int64) error
	AcknowledgeAll(ctx context.Context, actor stacks.Actor, batch string) error
	CheckinReceipt(ctx context.Context, batch string, patronID int64, limit int) (circulation.CheckinReceipt, error)
	PatronByCard(ctx context.Context, card string) (*patrons.Patron, error)
}

// checkinView fills the page's list: the latest return of each item, newest first.
// banner names the checkin whose banner to show (the one the page answers).
func (s *Server) checkinView(r *http.Request, v *CheckinView, banner int64) error {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		return err
	}
	v.Loc = prefs.Location
	batch := s.checkinBatch(r, false)
	if batch == "" {
		return nil
	}
	all, pending, err := s.Circ.CheckinList(r.Context(), batch, checkinRead)
	v.Pending = pending
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(all))
	for _, c := range all {
		if seen[c.Barcode] {
			continue
		}
		seen[c.Barcode] = true
		if len(v.List) == checkinShown {
			v.More++
			continue
		}
		v.List = append(v.List, c)
	}
	if banner != 0 && len(v.List) > 0 && v.List[0].ID == banner {
		v.Banner = &v.List[0]
	}
	return nil
}

// checkinPending reads the returns of this desk's list that staff must still act
// on, for the messages an answer swaps in.
func (s *Server) checkinPending(r *http.Request, v *CheckinView) error {
	batch := s.checkinBatch(r, false)
	if batch == "" {
		return nil
	}
	var err error
	v.Pending, err = s.Circ.CheckinsToAcknowledge(r.Context(), batch)
	return err
}

func (s *Server) handleCheckinPage(w http.ResponseWriter, r *http.Request) {
	banner, _ := strconv.ParseInt(r.URL.Query().Get("scan"), 10, 64)
	v := &CheckinView{}
	if err := s.checkinView(r, v, banner); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, CheckinPage(s.page(r, "Check in", "checkin"), v))
}

func (s *Server) handleCheckinItem(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	scanned := strings.TrimSpace(r.PostFormValue("barcode"))
	res, err := s.Circ.Checkin(r.Context(), circulation.CheckinRequest{
		Actor:   u.Actor(),
		Barcode: scanned,
		Batch:   s.checkinBatch(r, true),
	})
	if err == nil {
		s.cfg.Metrics.Circulation("checkin", "desk")
		if !isDeskScript(r) {
			redirect(w, r, "/checkin?scan="+strconv.FormatInt(res.ID, 10), http.StatusSeeOther)
			return
		}
		prefs, err := s.preferences(r.Context())
		if err != nil {
			s.Error(w, r, err)
			return
		}
		v := &CheckinView{Loc: prefs.Location, List: []circulation.CheckinResult{res}, Banner: &res}
		if res.Pending {
			if err := s.checkinPending(r, v); err != nil {
				s.Error(w, r, err)
				return
			}
		}
		s.Render(w, r, http.StatusOK, CheckinFragment(v))
		return
	}
	if stacks.ErrorCode(err) == stacks.EINTERNAL {
		s.Error(w, r, err)
		return
	}
	row := &CheckinRow{Scanned: scanned, Message: stacks.ErrorMessage(err)}
	if stacks.ErrorCode(err) == stacks.ENOTFOUND && scanned != "" {
		// Not an item: perhaps a patron's card, scanned at the wrong page.
		p, err := s.Circ.PatronByCard(r.Context(), scanned)
		switch {
		case err == nil:
			row.Patron = p
			row.Message = fmt.Sprintf("That is a patron card: %s (%s). Nothing was checked in.", p.Name(), p.Card)
		case stacks.ErrorCode(err) != stacks.ENOTFOUND:
			s.Error(w, r, err)
			return
		default:
			row.Message = fmt.Sprintf("No item has barcode %s. Nothing was checked in: check the barcode, or look the item up in Search.", scanned)
		}
	}
	status := kit.CodeStatus(stacks.ErrorCode(err))
	if row.Patron != nil {
		status = http.StatusUnprocessableEntity
	}
	v := &CheckinView{Row: row}
	if isDeskScript(r) {
		prefs, err := s.preferences(r.Context())
		if err != nil {
			s.Error(w, r, err)
			return
		}
		v.Loc = prefs.Location
		s.Render(w, r, status, CheckinFragment(v))
		return
	}
	if err := s.checkinView(r, v, 0); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, status, CheckinPage(s.page(r, "Check in", "checkin"), v))
}

// handleCheckinClear starts a new list; the messages of the old one are
// acknowledged with it.
func (s *Server) handleCheckinClear(w http.ResponseWriter, r *http.Request) {
	if err := s.Circ.AcknowledgeAll(r.Context(), userFrom(r.Context()).Actor(), s.checkinBatch(r, false)); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Sessions.Remove(r.Context(), sessCheckinBatch)
	redirect(w, r, "/checkin", http.StatusSeeOther)
}

// handleCheckinAcknowledge takes a message of the Check in page (hold found,
// transfer, withdrawn, a message for the desk) off the page: staff have done what
// it asked. htmx gets the messages still waiting; a plain form post is
// redirected to the page.
func (s *Server) handleCheckinAcknowledge(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	id, _ := strconv.ParseInt(r.PostFormValue("id"), 10, 64)
	err := s.Circ.AcknowledgeCheckin(r.Context(), u.Actor(), s.checkinBatch(r, false), id)
	if stacks.ErrorCode(err) == stacks.EINTERNAL {
		s.Error(w, r, err)
		return
	}
	if err == nil && !isDeskScript(r) {
		redirect(w, r, "/checkin", http.StatusSeeOther)
		return
	}
	v := &CheckinView{}
	status := http.StatusOK
	if err != nil {
		v.Notice, status = stacks.ErrorMessage(err), kit.CodeStatus(stacks.ErrorCode(err))
	}
	if isDeskScript(r) {
		if err := s.checkinPending(r, v); err != nil {
			s.Error(w, r, err)
			return
		}
		s.Render(w, r, status, CheckinAcknowledged(v))
		return
	}
	if err := s.checkinView(r, v, 0); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, status, CheckinPage(s.page(r, "Check in", "checkin"), v))
}

// handleCheckinReceipt prints one patron's returns on this desk's list, newest
// first: the patron asked for (?patron=), else the one whose item was returned
// last, as staff print it when that patron is at the desk.
func (s *Server) handleCheckinReceipt(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	var patronID int64
	if q := r.URL.Query().Get("patron"); q != "" {
		if patronID, err = strconv.ParseInt(q, 10, 64); err != nil || patronID <= 0 {
			s.Error(w, r, stacks.Errorf(stacks.ENOTFOUND, "There is no patron %q: open the receipt from the Check in page.", q))
			return
		}
	}
	v := &CheckinReceiptView{Loc: prefs.Location, Library: prefs.LibraryName}
	v.CheckinReceipt, err = s.Circ.CheckinReceipt(r.Context(), s.checkinBatch(r, false), patronID, checkinReceiptMax)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, CheckinReceiptPage(s.page(r, "Checkin receipt", "checkin"), v))
}

// checkinReceiptURL is the receipt of one patron's returns on this desk's list.
func checkinReceiptURL(patronID int64) string {
	return "/checkin/receipt?patron=" + strconv.FormatInt(patronID, 10)
}
