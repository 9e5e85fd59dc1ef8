package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/notices"
)

// noticeRoutes mounts the print batch, which desk staff print and post.
func (s *Server) noticeRoutes(r chi.Router) {
	r.Get("/notices/print", s.handleNoticePrint)
	r.Post("/notices/print", s.handleNoticePrinted)
}

// noticePrintService is what the print batch needs of package notices.
type noticePrintService interface {
	PrintBatch(ctx context.Context, code string, homeBranchID int64) (notices.PrintBatch, error)
	MarkPrinted(ctx context.Context, actor stacks.Actor, branchID int64, ids []int64) (code string, n int, err error)
}

// NoticePrintView is a branch's batch of notices to print: one a page.
type NoticePrintView struct {
	Branch    library.Branch
	Branches  []library.Branch
	Messages  []notices.Message
	Addresses map[int64]string
	Library   string
	Location  *time.Location
}

func (s *Server) handleNoticePrint(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	b, err := s.lib.print.PrintBatch(r.Context(), r.URL.Query().Get("branch"), userFrom(r.Context()).BranchID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := NoticePrintView{Branch: b.Branch, Branches: b.Branches, Messages: b.Messages, Addresses: b.Addresses,
		Library: prefs.LibraryName, Location: prefs.Location}
	s.Render(w, r, http.StatusOK, NoticePrintPage(s.page(r, "Notices to print: "+v.Branch.Name, ""), &v))
}

// handleNoticePrinted marks the batch printed: its notices leave the batch and
// count as sent.
func (s *Server) handleNoticePrinted(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.Error(w, r, stacks.Errorf(stacks.EINVALID, "The form could not be read; print the batch again."))
		return
	}
	branchID, _ := strconv.ParseInt(r.PostFormValue("branch_id"), 10, 64)
	var ids []int64
	for _, v := range r.PostForm["id"] {
		if id, err := strconv.ParseInt(v, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	code, n, err := s.lib.print.MarkPrinted(r.Context(), userFrom(r.Context()).Actor(), branchID, ids)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", strconv.Itoa(n)+" notices marked printed.")
	redirect(w, r, "/notices/print?branch="+code, http.StatusSeeOther)
}
