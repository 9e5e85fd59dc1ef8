package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/notices"
)

// noticeRoutes mounts the print batch, which desk staff print and post.
func (s *Server) noticeRoutes(r chi.Router) {
	r.Get("/notices/print", s.handleNoticePrint)
	r.Post("/notices/print", s.handleNoticePrinted)
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
	v := NoticePrintView{Library: prefs.LibraryName, Location: prefs.Location}
	code := r.URL.Query().Get("branch")
	err = s.DB.Read(r.Context(), func(tx *db.Tx) (err error) {
		if v.Branches, err = library.ListBranches(tx); err != nil {
			return err
		}
		if code == "" {
			for _, b := range v.Branches {
				if b.ID == userFrom(r.Context()).BranchID {
					code = b.Code
				}
			}
		}
		if v.Branch, err = library.FindBranchByCode(tx, code); err != nil {
			return err
		}
		if v.Messages, err = notices.PrintBatch(tx, v.Branch.ID); err != nil {
			return err
		}
		ids := make([]int64, 0, len(v.Messages))
		for _, m := range v.Messages {
			ids = append(ids, m.PatronID)
		}
		v.Addresses, err = notices.PatronAddresses(tx, ids)
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, NoticePrintPage(s.page(r, "Notices to print: "+v.Branch.Name, ""), &v))
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
	var n int
	var code string
	err := s.DB.Write(r.Context(), func(tx *db.Tx) (err error) {
		if err := tx.QueryRow(`SELECT code FROM branches WHERE id = ?`, branchID).Scan(&code); err != nil {
			return stacks.Errorf(stacks.ENOTFOUND, "There is no branch %d.", branchID)
		}
		n, err = notices.MarkPrinted(tx, userFrom(r.Context()).Actor(), branchID, ids)
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.flash(r, "ok", strconv.Itoa(n)+" notices marked printed.")
	redirect(w, r, "/notices/print?branch="+code, http.StatusSeeOther)
}
