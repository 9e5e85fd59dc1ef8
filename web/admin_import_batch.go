package web

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/stacks-ils/stacks/catalog"
)

// importBatchPage is how many staged records the review lists a page.
const importBatchPage = 100

func (s *Server) handleImportBatch(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no import batch at "+r.URL.Path+".")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	list := r.URL.Query().Get("list")
	if list == "" {
		list = catalog.ListNew
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	b, recs, total, err := s.Catalog.ImportBatchPage(r.Context(), id, list, (page-1)*importBatchPage, importBatchPage)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := &ImportBatchView{Batch: b, List: list, Records: recs, Total: total, Page: page, More: page*importBatchPage < total}
	s.Render(w, r, http.StatusOK, ImportBatchPage(s.page(r, fmt.Sprintf("Import batch %d", id), "admin"), v))
}

func (s *Server) handleImportBatchActions(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no import batch at "+r.URL.Path+".")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	actions := map[string]string{}
	for _, rule := range catalog.MatchRules {
		if v := r.PostFormValue("action_" + rule); v != "" {
			actions[rule] = v
		}
	}
	if err := s.Catalog.SetImportActions(r.Context(), userFrom(r.Context()).Actor(), id, actions); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", fmt.Sprintf("Batch %d: the actions are saved.", id))
	redirect(w, r, fmt.Sprintf("/admin/import/batches/%d", id), http.StatusSeeOther)
}

func (s *Server) handleImportBatchCommit(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no import batch at "+r.URL.Path+".")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	sum, err := s.Catalog.CommitImport(r.Context(), userFrom(r.Context()).Actor(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	msg := fmt.Sprintf("Batch %d is committed: %d records created, %d overlaid, %d skipped; %d copies added.", id, sum.Created, sum.Overlaid, sum.Skipped, sum.Copies)
	if sum.CopiesSkipped > 0 {
		msg += fmt.Sprintf(" %d copies were skipped (a bad barcode, or one another record has).", sum.CopiesSkipped)
	}
	if n := len(sum.Notes) - sum.CopiesSkipped; n > 0 {
		msg += fmt.Sprintf(" %d copies are marked damaged or not for loan in 952, which Stacks has no status for: they came in available.", n)
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, fmt.Sprintf("/admin/import/batches/%d?list=new", id), http.StatusSeeOther)
}

func (s *Server) handleImportBatchUndo(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no import batch at "+r.URL.Path+".")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	sum, err := s.Catalog.UndoImport(r.Context(), userFrom(r.Context()).Actor(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", fmt.Sprintf("Batch %d is undone: %d records deleted, %d restored to their MARC before it, %d copies deleted.",
		id, sum.Deleted, sum.Restored, sum.CopiesDeleted))
	redirect(w, r, fmt.Sprintf("/admin/import/batches/%d", id), http.StatusSeeOther)
}
