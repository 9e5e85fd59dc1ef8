package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/reports"
)

// stocktakeService keeps the stocktakes (reports.Service): a stocktake's
// results are a heavy read within Config.HeavyReadTimeout.
type stocktakeService interface {
	StocktakeStart(ctx context.Context, recent int) (reports.StocktakeStart, error)
	StartStocktake(ctx context.Context, actor stacks.Actor, in reports.StocktakeInput) (int64, error)
	StocktakeResults(ctx context.Context, id int64) (reports.StocktakeResult, error)
	Scan(ctx context.Context, stocktakeID int64, barcode string) (reports.StocktakeScan, error)
	CheckCheckin(ctx context.Context, stocktakeID int64, barcode string) error
}

func stocktakeURL(id int64) string { return "/reports/stocktake/" + strconv.FormatInt(id, 10) }

// StocktakeStartView is the Stocktake page: the form that starts one, and the
// latest ones.
type StocktakeStartView struct {
	Branches []reports.Choice
	// Locations are the shelving locations in use at each branch, for the form's
	// choice of a location instead of a call number range.
	Locations []reports.BranchLocations
	Input     url.Values
	Errors    FormErrors
	Recent    []reports.Stocktake
}

func (s *Server) renderStocktakeStart(w http.ResponseWriter, r *http.Request, status int, v StocktakeStartView) {
	st, err := s.reports.StocktakeStart(r.Context(), 10)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v.Branches, v.Locations, v.Recent = st.Branches, st.Locations, st.Recent
	if v.Errors == nil {
		v.Errors = FormErrors{}
	}
	if v.Input == nil {
		v.Input = url.Values{"branch": {strconv.FormatInt(userFrom(r.Context()).BranchID, 10)}}
	}
	s.Render(w, r, status, StocktakeStartPage(s.page(r, "Stocktake", "reports"), v))
}

func (s *Server) handleStocktakeStart(w http.ResponseWriter, r *http.Request) {
	s.renderStocktakeStart(w, r, http.StatusOK, StocktakeStartView{})
}

func (s *Server) handleStocktakeCreate(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.Error(w, r, stacks.Errorf(stacks.EINVALID, "The form could not be read; please try again."))
		return
	}
	branch, _ := strconv.ParseInt(r.PostForm.Get("branch"), 10, 64)
	in := reports.StocktakeInput{BranchID: branch, From: r.PostForm.Get("from"), To: r.PostForm.Get("to"),
		Location: r.PostForm.Get("location")}
	id, err := s.reports.StartStocktake(r.Context(), userFrom(r.Context()).Actor(), in)
	if stacks.ErrorCode(err) == stacks.EINVALID {
		v := StocktakeStartView{Input: r.PostForm, Errors: FormErrors{stacks.ErrorField(err): stacks.ErrorMessage(err)}}
		s.renderStocktakeStart(w, r, http.StatusUnprocessableEntity, v)
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	redirect(w, r, stocktakeURL(id), http.StatusSeeOther)
}

// StocktakeView is a stocktake: the scan page, or its results.
type StocktakeView struct {
	reports.StocktakeResult
}

// stocktakeShown is how many of the latest scans the scan page lists.
const stocktakeShown = 50

func (s *Server) loadStocktake(w http.ResponseWriter, r *http.Request) (StocktakeView, bool) {
	id, err := pathID(r, "There is no stocktake at "+r.URL.Path+". Start one on the Stocktake page.")
	if err != nil {
		s.Error(w, r, err)
		return StocktakeView{}, false
	}
	// A stocktake's results read every item in its range: a heavy read.
	var v StocktakeView
	if v.StocktakeResult, err = s.reports.StocktakeResults(r.Context(), id); err != nil {
		s.heavyError(w, r, err)
		return v, false
	}
	return v, true
}

func (s *Server) handleStocktakeScanPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadStocktake(w, r)
	if !ok {
		return
	}
	if len(v.Scans) > stocktakeShown {
		v.Scans = v.Scans[:stocktakeShown]
	}
	s.Render(w, r, http.StatusOK, StocktakeScanPage(s.page(r, "Stocktake", "reports"), v))
}

func (s *Server) handleStocktakeResults(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadStocktake(w, r)
	if !ok {
		return
	}
	s.Render(w, r, http.StatusOK, StocktakeResultsPage(s.page(r, "Stocktake results", "reports"), v))
}

// handleStocktakeScan records one scan: the desk script gets the scan's row, a
// plain form post goes back to the scan page (which lists it).
func (s *Server) handleStocktakeScan(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no stocktake at "+r.URL.Path+". Start one on the Stocktake page.")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	barcode := strings.TrimSpace(r.PostFormValue("barcode"))
	sc, err := s.reports.Scan(r.Context(), id, barcode)
	if err != nil && stacks.ErrorCode(err) == stacks.EINVALID {
		// An empty or malformed barcode: say so in the list, as the desk does.
		sc = reports.StocktakeScan{Barcode: barcode, Outcome: reports.ScanUnknown}
		if !isDeskScript(r) {
			s.Flash(r, "error", stacks.ErrorMessage(err))
			redirect(w, r, stocktakeURL(id), http.StatusSeeOther)
			return
		}
		s.Render(w, r, http.StatusOK, stocktakeRow(sc, stacks.ErrorMessage(err)))
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	if !isDeskScript(r) {
		redirect(w, r, stocktakeURL(id), http.StatusSeeOther)
		return
	}
	s.Render(w, r, http.StatusOK, stocktakeRow(sc, sc.Message()))
}

// handleStocktakeCheckin checks in an item found on the shelf while on loan (or
// marked lost or missing), from the results: only an item scanned in this
// stocktake and in one of those states (404 for no stocktake, 422 otherwise).
func (s *Server) handleStocktakeCheckin(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no stocktake at "+r.URL.Path+". Start one on the Stocktake page.")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	barcode := r.PostFormValue("barcode")
	if err := s.reports.CheckCheckin(r.Context(), id, barcode); err != nil {
		s.Error(w, r, err)
		return
	}
	res, err := s.Circ.Checkin(r.Context(), circulation.CheckinRequest{Actor: userFrom(r.Context()).Actor(), Barcode: barcode})
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		s.Flash(r, "error", stacks.ErrorMessage(err))
	} else {
		msg := "Checked in " + res.Barcode + " (" + res.Title + ")."
		switch {
		case res.Hold != nil:
			msg += " It fills a hold: put it on the hold shelf (see Check in for the slip)."
		case res.TransferTo != nil:
			msg += " It belongs at " + res.TransferTo.Name + ": send it there."
		}
		s.Flash(r, "ok", msg)
	}
	redirect(w, r, stocktakeURL(id)+"/results", http.StatusSeeOther)
}

// outcomeRow is the desk list's row kind for a scan outcome: a right-shelf scan
// is done; anything staff should act on is shown as refused (in red).
func outcomeRow(o string) string {
	if o == reports.ScanOnShelf {
		return rowDone
	}
	return rowRefused
}

// lastSeen shows a last-seen time, "never" for none.
func lastSeen(m reports.MissingItem) string {
	if m.LastSeen.IsZero() {
		return "never"
	}
	return m.LastSeen.UTC().Format("2006-01-02")
}

// branchName is the name of the branch with the id, for the location choice's
// groups.
func (v StocktakeStartView) branchName(id int64) string {
	for _, b := range v.Branches {
		if b.ID == id {
			return b.Name
		}
	}
	return idValue(id)
}

// locationSelected reports whether the form chose the location at the branch.
func (v StocktakeStartView) locationSelected(branchID int64, location string) bool {
	return v.Input.Get("location") == location && v.Input.Get("branch") == idValue(branchID)
}

// missingBarcodes returns the barcodes of the items a stocktake missed.
func (v StocktakeView) missingBarcodes() []string {
	bs := make([]string, len(v.Missing))
	for i, m := range v.Missing {
		bs[i] = m.Barcode
	}
	return bs
}
