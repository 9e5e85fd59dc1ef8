package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
)

// recordMARCService is what the MARC editor needs of the catalogue.
type recordMARCService interface {
	MARCEdit(ctx context.Context, id int64) (catalog.MARCEdit, error)
	PreviewMARC(ctx context.Context, id int64, text string) (catalog.MARCPreview, error)
	SaveMARCText(ctx context.Context, actor stacks.Actor, id int64, text string, base int) error
	CreateRecordText(ctx context.Context, actor stacks.Actor, text string) (int64, error)
	VersionPreview(ctx context.Context, id int64, v int) (catalog.MARCVersions, error)
	RestoreVersion(ctx context.Context, actor stacks.Actor, id int64, v int) error
}

// recordMARCRoutes mounts the MARC editor: a record's MARC as text (one line a
// field), a preview of the changes before they are saved, its versions with a
// restore, and new records from templates. Plain forms: no JavaScript needed.
func (s *Server) recordMARCRoutes(r chi.Router) {
	r.Get("/records/new/marc", s.handleMARCNew)
	r.Post("/records/new/marc", s.handleMARCCreate)
	r.Get("/records/{id}/marc", s.handleMARCEdit)
	r.Post("/records/{id}/marc", s.handleMARCUpdate)
	r.Get("/records/{id}/marc/versions", s.handleMARCVersion)
	r.Post("/records/{id}/marc/versions", s.handleMARCRestore)
}

func recordMARCURL(id int64) string {
	if id == 0 {
		return "/records/new/marc"
	}
	return recordURL(id) + "/marc"
}

// recordVersionsURL lists a record's versions; with v, it compares version v
// with the record as it is, and restores it (POST, the version in the form).
func recordVersionsURL(id int64) string { return recordMARCURL(id) + "/versions" }

func recordVersionURL(id int64, v int) string {
	return recordVersionsURL(id) + "?v=" + strconv.Itoa(v)
}

// The MARC editor's submit buttons (name marcStepField): preview the changes,
// save them (from the preview), or go back to editing (from the preview).
const (
	marcStepField   = "step"
	marcStepPreview = "preview"
	marcStepSave    = "save"
	marcStepEdit    = "edit"
)

// MARCEditorView is the MARC editor's model: the text, the version it was read
// at, the faults found in it, and (for a record) its versions.
type MARCEditorView struct {
	// ID is 0 for a new record.
	ID    int64
	Title string
	Text  string
	Base  int
	// Lines are the faulty lines; Message a fault of the whole record.
	Lines    []marc.LineError
	Message  string
	Versions []catalog.RecordVersion
	// Templates are offered for a new record when no text was chosen yet.
	Templates []catalog.Template
}

func (v *MARCEditorView) pageTitle() string {
	if v.ID == 0 {
		return "New record in MARC"
	}
	return "Edit MARC"
}

// MARCPreviewView shows what a save will change, with the text to save.
type MARCPreviewView struct {
	ID    int64
	Title string
	Text  string
	Base  int
	Diff  catalog.MARCDiff
}

// MARCVersionView lists a record's versions or, with Version, shows what
// restoring one will change.
type MARCVersionView struct {
	ID       int64
	Title    string
	Version  int
	Diff     catalog.MARCDiff
	Versions []catalog.RecordVersion
}

func (s *Server) renderMARCEditor(w http.ResponseWriter, r *http.Request, status int, v MARCEditorView) {
	s.Render(w, r, status, MARCEditorPage(s.page(r, v.pageTitle(), "search"), v))
}

// marcFailed shows the editor again with err's faults, with status 422 (409
// for a save over a newer version), and reports whether err was such a fault.
func (s *Server) marcFailed(w http.ResponseWriter, r *http.Request, v MARCEditorView, err error) bool {
	var lines catalog.ErrLines
	switch {
	case errors.As(err, &lines):
		v.Lines = lines
	case stacks.ErrorCode(err) == stacks.EINVALID || stacks.ErrorCode(err) == stacks.ECONFLICT:
		v.Message = stacks.ErrorMessage(err)
	default:
		return false
	}
	status := http.StatusUnprocessableEntity
	if stacks.ErrorCode(err) == stacks.ECONFLICT {
		status = http.StatusConflict
	}
	s.renderMARCEditorAgain(w, r, status, v, status == http.StatusConflict)
	return true
}

// renderMARCEditorAgain shows the editor with the text as sent, the record's
// title and versions read anew; with rebase, the text is to be saved over the
// newest version (the next preview compares it with that one).
func (s *Server) renderMARCEditorAgain(w http.ResponseWriter, r *http.Request, status int, v MARCEditorView, rebase bool) {
	if v.ID != 0 {
		e, err := s.Catalog.MARCEdit(r.Context(), v.ID)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		v.Title, v.Versions = e.Title, e.Versions
		if rebase {
			v.Base = e.Version
		}
	}
	s.renderMARCEditor(w, r, status, v)
}

func (s *Server) handleMARCEdit(w http.ResponseWriter, r *http.Request) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	e, err := s.Catalog.MARCEdit(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.renderMARCEditor(w, r, http.StatusOK, MARCEditorView{ID: id, Title: e.Title, Text: e.Text, Base: e.Version, Versions: e.Versions})
}

// marcPost runs the editor's steps for record id (0: a new record).
func (s *Server) marcPost(w http.ResponseWriter, r *http.Request, id int64) {
	v := MARCEditorView{ID: id, Text: r.PostFormValue("marc")}
	base, err := formBase(r.PostFormValue("base"))
	if err != nil {
		// Not a save by someone else (ECONFLICT): a form not as sent.
		s.marcFailed(w, r, v, err)
		return
	}
	v.Base = base
	actor := userFrom(r.Context()).Actor()
	switch r.PostFormValue(marcStepField) {
	case marcStepEdit:
		s.renderMARCEditorAgain(w, r, http.StatusOK, v, false)
	case marcStepSave:
		if id == 0 {
			newID, err := s.Catalog.CreateRecordText(r.Context(), actor, v.Text)
			if err != nil {
				if !s.marcFailed(w, r, v, err) {
					s.Error(w, r, err)
				}
				return
			}
			s.Flash(r, "ok", "The record is in the catalogue. Add its items (copies) so that they can be lent.")
			redirect(w, r, recordURL(newID), http.StatusSeeOther)
			return
		}
		if err := s.Catalog.SaveMARCText(r.Context(), actor, id, v.Text, v.Base); err != nil {
			if !s.marcFailed(w, r, v, err) {
				s.Error(w, r, err)
			}
			return
		}
		s.Flash(r, "ok", "The record's MARC is saved; its previous version is kept.")
		redirect(w, r, recordURL(id), http.StatusSeeOther)
	default:
		p, err := s.Catalog.PreviewMARC(r.Context(), id, v.Text)
		if err != nil {
			if !s.marcFailed(w, r, v, err) {
				s.Error(w, r, err)
			}
			return
		}
		pv := MARCPreviewView{ID: id, Title: p.Title, Text: v.Text, Base: v.Base, Diff: p.Diff}
		s.Render(w, r, http.StatusOK, MARCPreviewPage(s.page(r, "Check the changes", "search"), pv))
	}
}

func (s *Server) handleMARCUpdate(w http.ResponseWriter, r *http.Request) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.marcPost(w, r, id)
}

// handleMARCNew offers the templates, or, with ?template=, the editor filled
// with one.
func (s *Server) handleMARCNew(w http.ResponseWriter, r *http.Request) {
	v := MARCEditorView{}
	code := r.URL.Query().Get("template")
	if code == "" {
		v.Templates = catalog.Templates()
		s.Render(w, r, http.StatusOK, MARCTemplatesPage(s.page(r, "New record from a template", "search"), v))
		return
	}
	text, ok := catalog.TemplateText(code, s.DB.Now())
	if !ok {
		s.Error(w, r, stacks.Errorf(stacks.ENOTFOUND, "There is no template %q; choose one from the list.", code))
		return
	}
	v.Text = text
	s.renderMARCEditor(w, r, http.StatusOK, v)
}

func (s *Server) handleMARCCreate(w http.ResponseWriter, r *http.Request) {
	s.marcPost(w, r, 0)
}

// versionParam reads the version a request names (v in the query or the
// form); 0 if it names none.
func versionParam(r *http.Request) (int, error) {
	s := r.FormValue("v")
	if s == "" {
		return 0, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		return 0, stacks.Errorf(stacks.ENOTFOUND, "There is no version %q; choose one from the record's list of versions.", s)
	}
	return v, nil
}

// handleMARCVersion lists the record's versions, or shows what restoring
// version ?v= would change.
func (s *Server) handleMARCVersion(w http.ResponseWriter, r *http.Request) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	ver, err := versionParam(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	vs, err := s.Catalog.VersionPreview(r.Context(), id, ver)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := MARCVersionView{ID: id, Title: vs.Title, Version: ver, Versions: vs.Versions, Diff: vs.Diff}
	title := "Versions"
	if ver != 0 {
		title = fmt.Sprintf("Version %d", ver)
	}
	s.Render(w, r, http.StatusOK, MARCVersionPage(s.page(r, title, "search"), v))
}

func (s *Server) handleMARCRestore(w http.ResponseWriter, r *http.Request) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	ver, err := versionParam(r)
	if err == nil && ver == 0 {
		err = stacks.Errorf(stacks.EINVALID, "Choose the version to restore from the record's list of versions.")
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if err := s.Catalog.RestoreVersion(r.Context(), userFrom(r.Context()).Actor(), id, ver); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", fmt.Sprintf("Version %d is restored: it is saved as the record's newest version.", ver))
	redirect(w, r, recordURL(id), http.StatusSeeOther)
}

// failed reports whether the editor shows faults.
func (v *MARCEditorView) failed() bool { return len(v.Lines) > 0 || v.Message != "" }

// describedBy are the ids that describe the textarea: its hint, and the faults.
func (v *MARCEditorView) describedBy() string {
	if v.failed() {
		return "marc-help " + marcErrorsID
	}
	return "marc-help"
}

// marcErrorsID ties the textarea to the list of faulty lines.
const marcErrorsID = "marc-errors"

// diffLabel is how a change reads in the preview.
func diffLabel(kind string) string {
	switch kind {
	case "added":
		return "Added"
	case "removed":
		return "Removed"
	case "changed":
		return "Changed"
	}
	return ""
}
