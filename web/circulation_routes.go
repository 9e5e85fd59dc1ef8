package web

import (
	"cmp"
	"crypto/rand"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks/library"
)

// circulationRoutes mounts the desk pages: check out, check in.
//
// Every desk form works as a plain form post. The desk script (static/stacks.js)
// sends the same forms with an HX-Request header and gets back the scan's row and
// the parts of the page it changed instead of a new page (isDeskScript).
func (s *Server) circulationRoutes(r chi.Router) {
	r.Get("/checkout", s.handleCheckoutPage)
	r.Post("/checkout/scan", s.handleCheckoutScan)
	r.Post("/checkout/patron", s.handleCheckoutPatron)
	r.Post("/checkout", s.handleCheckoutItem)
	r.Post("/checkout/cancel", s.handleCheckoutCancel)
	r.Post("/checkout/renew", s.handleCheckoutRenew)
	r.Post("/checkout/renew-card", s.handleCheckoutRenewCard)
	r.Post("/checkout/dismiss-message", s.handleCheckoutDismissMessage)
	r.Post("/checkout/done", s.handleCheckoutDone)
	r.Get("/checkout/slip", s.handleCheckoutSlip)
	r.Get("/checkin", s.handleCheckinPage)
	r.Post("/checkin", s.handleCheckinItem)
	r.Post("/checkin/clear", s.handleCheckinClear)
	r.Post("/checkin/acknowledge", s.handleCheckinAcknowledge)
	r.Get("/checkin/receipt", s.handleCheckinReceipt)
}

// isDeskScript reports whether the request was sent by the desk script, which
// wants a fragment (the scan's row) rather than a page.
func isDeskScript(r *http.Request) bool { return r.Header.Get("HX-Request") == "true" }

// deskVisit is the patron being served at Check out, kept in the staff session: who,
// since when (the visit's loans are those issued since), the loans renewed during
// the visit, whether staff already confirmed lending despite fines (asked once per
// visit), and when the desk was last active for it (for the idle preference).
type deskVisit struct {
	PatronID       int64
	Started        int64
	FinesConfirmed bool
	// Seen is refreshed at most once a minute (visitSeenRefresh), so that a scan
	// rarely rewrites the session: the idle end is exact to within that.
	Seen    int64   `json:",omitempty"`
	Renewed []int64 `json:",omitempty"`
}

const (
	sessVisit        = "visit"
	sessCheckinBatch = "checkin_batch"

	visitSeenRefresh = 60 // seconds
)

// visit returns the open visit. A visit idle for longer than the preference ends
// here, and ended says so (for the page to tell staff why the patron is gone).
func (s *Server) visit(r *http.Request, prefs library.Preferences) (v deskVisit, ok bool, ended string) {
	v, ok = s.Sessions.Get(r.Context(), sessVisit).(deskVisit)
	if !ok || v.PatronID == 0 {
		return deskVisit{}, false, ""
	}
	now := s.DB.Now().Unix()
	seen := max(v.Seen, v.Started)
	if idle := int64(prefs.DeskIdleMinutes) * 60; idle > 0 && now-seen > idle {
		s.Sessions.Remove(r.Context(), sessVisit)
		return deskVisit{}, false, fmt.Sprintf("The previous patron's visit ended after %d minutes without activity at the desk.", prefs.DeskIdleMinutes)
	}
	if now-seen >= visitSeenRefresh {
		v.Seen = now
		s.Sessions.Put(r.Context(), sessVisit, v)
	}
	return v, true, ""
}

// startVisit opens a visit for a patron, ending any other.
func (s *Server) startVisit(r *http.Request, patronID int64) deskVisit {
	now := s.DB.Now().Unix()
	v := deskVisit{PatronID: patronID, Started: now, Seen: now}
	s.Sessions.Put(r.Context(), sessVisit, v)
	return v
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

func init() { gob.Register(deskVisit{}) }

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// newestFirst orders loans by when they were issued, newest first.
func newestFirst(a, b time.Time, ida, idb int64) int {
	if c := b.Compare(a); c != 0 {
		return c
	}
	return cmp.Compare(idb, ida)
}
