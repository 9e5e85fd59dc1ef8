package web

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/stacks-ils/stacks/patrons"
)

// PatronPurgeView is the confirmation page for deleting a patron.
type PatronPurgeView struct {
	Patron *patrons.Patron
	// Blockers says why the patron may not be deleted now; "" when they may.
	Blockers string
}

// handlePatronExport sends everything the library holds about the patron as a
// JSON download (the GDPR right of access), and records the export in the
// audit log. Any staff member who may see the patron page may export it: it
// holds what that page shows, and the audit log says who took a copy.
func (s *Server) handlePatronExport(w http.ResponseWriter, r *http.Request) {
	id, err := patronID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	e, err := s.patrons.privacy.Export(r.Context(), userFrom(r.Context()).Actor(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	card, _ := e.Patron["card"].(string)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", "patron-"+safeFileName(card)+".json"))
	w.Write(append(b, '\n'))
}

// safeFileName keeps letters, digits and '-' of s, for a download's name.
func safeFileName(s string) string {
	out := make([]rune, 0, len(s))
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "export"
	}
	return string(out)
}

// handleAdminPatronPurgeConfirm asks an administrator to confirm deleting a
// patron, or says why they cannot be deleted yet.
func (s *Server) handleAdminPatronPurgeConfirm(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	s.renderPatronPurge(w, r, id, http.StatusOK)
}

func (s *Server) renderPatronPurge(w http.ResponseWriter, r *http.Request, id int64, status int) {
	var v PatronPurgeView
	var err error
	v.Patron, v.Blockers, err = s.patrons.privacy.PurgeCheck(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, status, PatronPurgePage(s.page(r, "Delete "+v.Patron.Name(), "patrons"), v))
}

// handleAdminPatronPurge deletes the patron and every row about them
// (privacy.Purge), when the administrator ticked the confirmation; refused, with
// the reason on the confirmation page, while they owe money or have loans or
// holds.
func (s *Server) handleAdminPatronPurge(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		s.Flash(r, "error", "Nothing was deleted: tick the box to confirm, then press Delete patron.")
		redirect(w, r, "/admin/patrons/"+fmt.Sprint(id)+"/purge", http.StatusSeeOther)
		return
	}
	if err := s.patrons.privacy.Purge(r.Context(), userFrom(r.Context()).Actor(), id); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", fmt.Sprintf("Patron %d was deleted, with their notices and holds; their past loans stay in the statistics without their name.", id))
	redirect(w, r, "/patrons", http.StatusSeeOther)
}
