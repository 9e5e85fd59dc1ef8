package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
)

// catalogMaintenanceService is what the pages that withdraw, delete, merge and
// batch-edit ask of the catalogue.
type catalogMaintenanceService interface {
	WithdrawItem(ctx context.Context, actor stacks.Actor, itemID int64, reason string) (catalog.WithdrawResult, error)
	DeleteItem(ctx context.Context, actor stacks.Actor, itemID int64) (catalog.DeleteItemResult, error)
	RecordDeletion(ctx context.Context, id int64) (catalog.RecordDeletion, error)
	DeleteRecord(ctx context.Context, actor stacks.Actor, recordID, moveHoldsTo int64) (catalog.DeleteRecordResult, error)
	MergePreview(ctx context.Context, keepID, mergeID int64) (catalog.MergePreview, error)
	MergeRecords(ctx context.Context, actor stacks.Actor, keepID, mergeID int64, takeTags []string) (catalog.MergeResult, error)
	RecordRedirect(ctx context.Context, id int64) (int64, error)
	PreviewBatch(ctx context.Context, barcodes []string, ch catalog.BatchChange) (catalog.BatchPreview, error)
	ApplyBatch(ctx context.Context, actor stacks.Actor, barcodes []string, ch catalog.BatchChange) (catalog.BatchResult, error)
	RecentBatches(ctx context.Context) ([]catalog.Batch, error)
	UndoBatch(ctx context.Context, actor stacks.Actor, id int64) (catalog.BatchUndo, error)
}

// catalogMaintenanceRoutes mounts the pages that withdraw and delete items,
// delete and merge records, and edit items in batches. Every destructive step
// is a POST from a confirmation page; the GETs only show what would be done.
func (s *Server) catalogMaintenanceRoutes(r chi.Router) {
	r.Get("/items/{id}/withdraw", s.handleItemWithdrawForm)
	r.Post("/items/{id}/withdraw", s.handleItemWithdraw)
	r.Get("/items/{id}/delete", s.handleItemDeleteForm)
	r.Post("/items/{id}/delete", s.handleItemDelete)
	r.Get("/records/{id}/delete", s.handleRecordDeleteForm)
	r.Post("/records/{id}/delete", s.handleRecordDelete)
	r.Get("/records/{id}/merge", s.handleMergeForm)
	r.Post("/records/{id}/merge", s.handleMerge)
	r.Get("/items/batch", s.handleBatchForm)
	r.Post("/items/batch/list", s.handleBatchList)
	r.Post("/items/batch/preview", s.handleBatchPreview)
	r.Post("/items/batch", s.handleBatchApply)
	r.Post("/items/batch/{id}/undo", s.handleBatchUndo)
}

// redirectMerged sends a request for record id, which is not in the catalogue,
// to the record it was merged into, and reports whether it did.
func (s *Server) redirectMerged(w http.ResponseWriter, r *http.Request, id int64) bool {
	to, err := s.Catalog.RecordRedirect(r.Context(), id)
	if err != nil || to == 0 {
		return false
	}
	redirect(w, r, recordURL(to), http.StatusMovedPermanently)
	return true
}

func itemWithdrawURL(id int64) string { return "/items/" + strconv.FormatInt(id, 10) + "/withdraw" }

func itemDeleteURL(id int64) string { return "/items/" + strconv.FormatInt(id, 10) + "/delete" }

func recordDeleteURL(id int64) string { return recordURL(id) + "/delete" }

func recordMergeURL(id int64) string { return recordURL(id) + "/merge" }

// ItemRemoveView is the model of the pages that withdraw or delete an item.
type ItemRemoveView struct {
	Item   *catalog.ItemDetails
	Reason string
	Errors FormErrors
	// Refused is why the item cannot be withdrawn or deleted now.
	Refused string
}

func (s *Server) loadItemRemove(w http.ResponseWriter, r *http.Request) (*ItemRemoveView, bool) {
	id, err := itemPathID(r)
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	f, err := s.Catalog.ItemForm(r.Context(), id, 0)
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	return &ItemRemoveView{Item: f.Item, Errors: FormErrors{}}, true
}

func (s *Server) handleItemWithdrawForm(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadItemRemove(w, r)
	if !ok {
		return
	}
	s.Render(w, r, http.StatusOK, ItemWithdrawPage(s.page(r, "Withdraw item "+v.Item.Barcode, "search"), v))
}

func (s *Server) handleItemWithdraw(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadItemRemove(w, r)
	if !ok {
		return
	}
	v.Reason = r.PostFormValue("reason")
	res, err := s.Catalog.WithdrawItem(r.Context(), userFrom(r.Context()).Actor(), v.Item.ID, v.Reason)
	if err != nil {
		var internal bool
		if v.Refused, internal = placeRefusal(err, v.Errors); internal {
			s.Error(w, r, err)
			return
		}
		s.Render(w, r, http.StatusUnprocessableEntity, ItemWithdrawPage(s.page(r, "Withdraw item "+v.Item.Barcode, "search"), v))
		return
	}
	msg := fmt.Sprintf("Item %s is withdrawn. Take it off the shelf.", res.Barcode)
	if res.HoldsCancelled > 0 {
		msg += fmt.Sprintf(" %s on this very copy cancelled: tell the patrons.", countHolds(res.HoldsCancelled))
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, recordURL(v.Item.RecordID), http.StatusSeeOther)
}

func countHolds(n int) string {
	if n == 1 {
		return "1 hold"
	}
	return strconv.Itoa(n) + " holds"
}

func (s *Server) handleItemDeleteForm(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadItemRemove(w, r)
	if !ok {
		return
	}
	s.Render(w, r, http.StatusOK, ItemDeletePage(s.page(r, "Delete item "+v.Item.Barcode, "search"), v))
}

func (s *Server) handleItemDelete(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadItemRemove(w, r)
	if !ok {
		return
	}
	res, err := s.Catalog.DeleteItem(r.Context(), userFrom(r.Context()).Actor(), v.Item.ID)
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		v.Refused = stacks.ErrorMessage(err)
		s.Render(w, r, http.StatusConflict, ItemDeletePage(s.page(r, "Delete item "+v.Item.Barcode, "search"), v))
		return
	}
	msg := fmt.Sprintf("Item %s is deleted from the catalogue.", res.Barcode)
	if res.HoldsCancelled > 0 {
		msg += fmt.Sprintf(" %s on this very copy cancelled: tell the patrons.", countHolds(res.HoldsCancelled))
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, recordURL(res.RecordID), http.StatusSeeOther)
}

// RecordDeleteView is the model of the page that deletes a record.
type RecordDeleteView struct {
	catalog.RecordDeletion
	// Holds is "cancel" or "move"; MoveTo the record number typed.
	Holds  string
	MoveTo string
	Errors FormErrors
}

func (s *Server) loadRecordDelete(w http.ResponseWriter, r *http.Request) (*RecordDeleteView, bool) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	rd, err := s.Catalog.RecordDeletion(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	return &RecordDeleteView{RecordDeletion: rd, Holds: "cancel", Errors: FormErrors{}}, true
}

func (s *Server) handleRecordDeleteForm(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadRecordDelete(w, r)
	if !ok {
		return
	}
	s.Render(w, r, http.StatusOK, RecordDeletePage(s.page(r, "Delete record", "search"), v))
}

func (s *Server) handleRecordDelete(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadRecordDelete(w, r)
	if !ok {
		return
	}
	v.Holds, v.MoveTo = r.PostFormValue("holds"), strings.TrimSpace(r.PostFormValue("move_holds_to"))
	var moveTo int64
	if v.Holds == "move" {
		n, err := strconv.ParseInt(strings.TrimPrefix(v.MoveTo, "#"), 10, 64)
		if err != nil || n <= 0 {
			v.Errors["move_holds_to"] = "Enter the number of the record to move the holds to, as in its address /records/123."
			s.Render(w, r, http.StatusUnprocessableEntity, RecordDeletePage(s.page(r, "Delete record", "search"), v))
			return
		}
		moveTo = n
	}
	res, err := s.Catalog.DeleteRecord(r.Context(), userFrom(r.Context()).Actor(), v.Record.ID, moveTo)
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		if f := stacks.ErrorField(err); f != "" {
			v.Errors[f] = stacks.ErrorMessage(err)
		} else {
			v.Refused = err
		}
		s.Render(w, r, http.StatusUnprocessableEntity, RecordDeletePage(s.page(r, "Delete record", "search"), v))
		return
	}
	msg := fmt.Sprintf("%q is deleted from the catalogue with its %d copies.", recordEditShortTitle(res.Title), res.CopiesDeleted)
	switch {
	case res.HoldsMoved > 0:
		msg += fmt.Sprintf(" %s moved to record %d.", countHolds(res.HoldsMoved), res.MovedTo)
	case res.HoldsCancelled > 0:
		msg += fmt.Sprintf(" %s cancelled: tell the patrons.", countHolds(res.HoldsCancelled))
	}
	s.Flash(r, "ok", msg)
	if res.MovedTo != 0 {
		redirect(w, r, recordURL(res.MovedTo), http.StatusSeeOther)
		return
	}
	redirect(w, r, "/search", http.StatusSeeOther)
}

// errorMessage is an error's message for people.
func errorMessage(err error) string { return stacks.ErrorMessage(err) }
