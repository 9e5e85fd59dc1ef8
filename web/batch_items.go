package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/reports"
)

// BatchView is the model of the batch item edit pages: the form (barcodes, the
// change), then the preview with its Apply button, then the result; the
// batches of the last day, each with its Undo button.
type BatchView struct {
	Barcodes  string
	Change    catalog.BatchChange
	Preview   *catalog.BatchPreview
	Result    *catalog.BatchResult
	Recent    []catalog.Batch
	Branches  []library.Branch
	ItemTypes []library.Named
	Errors    FormErrors
	Refused   string
}

// batchLinesShown is how many lines of a preview or result the page lists; the
// counts cover them all.
const batchLinesShown = 500

func (v *BatchView) lines() []catalog.BatchLine {
	var ls []catalog.BatchLine
	switch {
	case v.Result != nil:
		ls = v.Result.Lines
	case v.Preview != nil:
		ls = v.Preview.Lines
	}
	return ls[:min(len(ls), batchLinesShown)]
}

func (v *BatchView) moreLines() int {
	n := 0
	switch {
	case v.Result != nil:
		n = len(v.Result.Lines)
	case v.Preview != nil:
		n = len(v.Preview.Lines)
	}
	return max(0, n-batchLinesShown)
}

func batchOutcome(l catalog.BatchLine) string {
	switch {
	case !l.Found:
		return "Not found"
	case l.Refused != "":
		return "Left as it is: " + l.Refused
	case !l.Changes():
		return "Already so"
	}
	return "Changes"
}

func batchFromForm(r *http.Request) *BatchView {
	return &BatchView{
		Barcodes: r.PostFormValue("barcodes"),
		Change:   catalog.BatchChange{Field: r.PostFormValue("field"), Value: r.PostFormValue("value")},
		Errors:   FormErrors{},
	}
}

func (s *Server) renderBatch(w http.ResponseWriter, r *http.Request, status int, v *BatchView) {
	var err error
	if v.Branches, v.ItemTypes, err = s.Catalog.ImportChoices(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	if v.Recent, err = s.Catalog.RecentBatches(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, status, BatchItemsPage(s.page(r, "Batch item edit", "search"), v))
}

// batchFailed shows the form again with err beside its field (or above the
// form), and reports whether err was for people.
func (s *Server) batchFailed(w http.ResponseWriter, r *http.Request, v *BatchView, err error) bool {
	var internal bool
	if v.Refused, internal = placeRefusal(err, v.Errors); internal {
		return false
	}
	s.renderBatch(w, r, http.StatusUnprocessableEntity, v)
	return true
}

// batchDefault is the form with no change chosen yet, on its first choice,
// and barcodes filled in.
func batchDefault(barcodes string) *BatchView {
	return &BatchView{Barcodes: barcodes, Change: catalog.BatchChange{Field: catalog.BatchLocation}, Errors: FormErrors{}}
}

func (s *Server) handleBatchForm(w http.ResponseWriter, r *http.Request) {
	s.renderBatch(w, r, http.StatusOK, batchDefault(""))
}

// handleBatchList shows the form filled in with a list of barcodes sent from
// another page (batchItemsForm with no change), for the change to be chosen
// there. It changes nothing.
func (s *Server) handleBatchList(w http.ResponseWriter, r *http.Request) {
	s.renderBatch(w, r, http.StatusOK, batchDefault(r.PostFormValue("barcodes")))
}

func (s *Server) handleBatchPreview(w http.ResponseWriter, r *http.Request) {
	v := batchFromForm(r)
	p, err := s.Catalog.PreviewBatch(r.Context(), catalog.ParseBarcodes(v.Barcodes), v.Change)
	if err != nil {
		if !s.batchFailed(w, r, v, err) {
			s.Error(w, r, err)
		}
		return
	}
	v.Preview = &p
	s.renderBatch(w, r, http.StatusOK, v)
}

func (s *Server) handleBatchApply(w http.ResponseWriter, r *http.Request) {
	v := batchFromForm(r)
	res, err := s.Catalog.ApplyBatch(r.Context(), userFrom(r.Context()).Actor(), catalog.ParseBarcodes(v.Barcodes), v.Change)
	if err != nil {
		if !s.batchFailed(w, r, v, err) {
			s.Error(w, r, err)
		}
		return
	}
	v.Result = &res
	msg := fmt.Sprintf("Batch %d: %s set on %d items.", res.BatchID, strings.ToLower(catalog.BatchFieldLabel(res.Change.Field)), res.Changed)
	if res.HoldsCancelled > 0 {
		msg += fmt.Sprintf(" %s on the withdrawn copies cancelled: tell the patrons.", countHolds(res.HoldsCancelled))
	}
	s.Flash(r, "ok", msg)
	s.renderBatch(w, r, http.StatusOK, v)
}

func (s *Server) handleBatchUndo(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no batch edit at "+r.URL.Path+".")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	u, err := s.Catalog.UndoBatch(r.Context(), userFrom(r.Context()).Actor(), id)
	if err != nil {
		if !s.batchFailed(w, r, batchDefault(""), err) {
			s.Error(w, r, err)
		}
		return
	}
	msg := fmt.Sprintf("Batch %d is undone: %d items are back as they were.", id, u.Items)
	if u.HoldsRestored > 0 {
		back := " are back in their queues, where they were"
		if u.HoldsRestored == 1 {
			back = " is back in its queue, where it was"
		}
		msg += fmt.Sprintf(" %s on those copies%s: tell the patrons.", countHolds(u.HoldsRestored), back)
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, "/items/batch", http.StatusSeeOther)
}

// reportBarcodes returns the barcodes of a report's rows when it lists items
// (a column is marked ItemBarcodes), for batchItemsForm.
func reportBarcodes(res *reports.Result) []string {
	col := slices.IndexFunc(res.Columns, func(c reports.Column) bool { return c.ItemBarcodes })
	if col < 0 {
		return nil
	}
	var bs []string
	for _, row := range res.Rows {
		if col < len(row) && row[col] != "" {
			bs = append(bs, row[col])
		}
	}
	return bs
}

// reportBatchLabel names what a report's batchItemsForm sends: the page's
// rows only when the report has more.
func reportBatchLabel(res *reports.Result, n int) string {
	if res.Pages > 1 || res.Truncated {
		return "Edit the " + plural(n, "item", "items") + " on this page together…"
	}
	return "Edit these " + plural(n, "item", "items") + " together…"
}
