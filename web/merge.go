package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
)

// MergeView is the model of the page that merges another record into this one:
// first the other record's number, then both records side by side, the MARC
// fields that may be taken from the other, and the confirmation.
type MergeView struct {
	KeepID  int64
	Other   string
	Preview *catalog.MergePreview
	Take    []string
	Errors  FormErrors
	Refused string
}

func (v *MergeView) taken(tag string) bool {
	for _, t := range v.Take {
		if t == tag {
			return true
		}
	}
	return false
}

// loadMerge reads the record kept and, when the other's number is given and
// valid, the preview of the merge; a bad number is an error beside its field.
func (s *Server) loadMerge(w http.ResponseWriter, r *http.Request, other string) (*MergeView, bool) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return nil, false
	}
	v := &MergeView{KeepID: id, Other: strings.TrimSpace(other), Errors: FormErrors{}}
	if v.Other == "" {
		return v, true
	}
	otherID, err := strconv.ParseInt(strings.TrimPrefix(v.Other, "#"), 10, 64)
	if err != nil || otherID <= 0 {
		v.Errors["other"] = "Enter the number of the other record, as 123 in its address /records/123."
		return v, true
	}
	p, err := s.Catalog.MergePreview(r.Context(), id, otherID)
	switch {
	case err == nil:
		v.Preview = &p
	case stacks.ErrorCode(err) == stacks.EINTERNAL:
		s.Error(w, r, err)
		return nil, false
	default:
		v.Errors["other"] = stacks.ErrorMessage(err)
	}
	return v, true
}

func (s *Server) renderMerge(w http.ResponseWriter, r *http.Request, status int, v *MergeView) {
	s.Render(w, r, status, MergePage(s.page(r, "Merge records", "search"), v))
}

func (s *Server) handleMergeForm(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadMerge(w, r, r.URL.Query().Get("other"))
	if !ok {
		return
	}
	status := http.StatusOK
	if len(v.Errors) > 0 {
		status = http.StatusUnprocessableEntity
	}
	s.renderMerge(w, r, status, v)
}

func (s *Server) handleMerge(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadMerge(w, r, r.PostFormValue("other"))
	if !ok {
		return
	}
	v.Take = r.PostForm["take"]
	if v.Preview == nil || len(v.Errors) > 0 {
		if len(v.Errors) == 0 {
			v.Errors["other"] = "Enter the number of the record to merge into this one."
		}
		s.renderMerge(w, r, http.StatusUnprocessableEntity, v)
		return
	}
	res, err := s.Catalog.MergeRecords(r.Context(), userFrom(r.Context()).Actor(), v.KeepID, v.Preview.Merge.ID, v.Take)
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			s.Error(w, r, err)
			return
		}
		v.Refused = stacks.ErrorMessage(err)
		s.renderMerge(w, r, http.StatusUnprocessableEntity, v)
		return
	}
	msg := fmt.Sprintf("Record %d is merged into this one: %d copies and %s moved here; its address now leads here.",
		res.Merged, res.CopiesMoved, countHolds(res.HoldsMoved))
	if res.HoldsCancelled > 0 {
		msg += fmt.Sprintf(" %s cancelled where a patron had one on each record.", countHolds(res.HoldsCancelled))
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, recordURL(res.Kept), http.StatusSeeOther)
}
