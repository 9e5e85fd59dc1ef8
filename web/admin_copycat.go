package web

import (
	"database/sql"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/copycat"
)

// adminCopycatPath is the list of copy cataloguing targets.
const adminCopycatPath = "/admin/copycat"

func adminCopycatTargetPath(id int64) string { return adminCopycatPath + "/" + adminID(id) }

// adminCopycatRoutes mounts the copy cataloguing targets' administration.
func (s *Server) adminCopycatRoutes(r chi.Router) {
	r.Get("/copycat", s.handleAdminCopycat)
	r.Post("/copycat", s.handleAdminCopycatAdd)
	r.Get("/copycat/{id}", s.handleAdminCopycatEdit)
	r.Post("/copycat/{id}", s.handleAdminCopycatUpdate)
	r.Post("/copycat/{id}/delete", s.handleAdminCopycatDelete)
}

// AdminCopycatView is the targets page: the list and the add form.
type AdminCopycatView struct {
	Targets []copycat.Target
	Form    AdminCopycatForm
}

// AdminCopycatForm is one target's form, as typed, so that a refused form comes
// back unchanged with the messages beside the fields.
type AdminCopycatForm struct {
	// ID is 0 on the add form.
	ID                                 int64
	Name, Kind, Address                string
	Syntax, Timeout                    string
	Enabled                            bool
	ISBNIndex, TitleIndex, AuthorIndex string
	// Errors are keyed by field: name, kind, address, syntax, timeout,
	// isbn_index, title_index, author_index.
	Errors FormErrors
	// Message is a refusal that is about no one field.
	Message string
}

func newAdminCopycatForm(t copycat.Target) AdminCopycatForm {
	return AdminCopycatForm{
		ID: t.ID, Name: t.Name, Kind: string(t.Kind), Address: t.Address, Syntax: string(t.Syntax),
		Timeout: strconv.FormatFloat(t.Timeout.Seconds(), 'f', -1, 64), Enabled: t.Enabled,
		ISBNIndex: t.ISBNIndex, TitleIndex: t.TitleIndex, AuthorIndex: t.AuthorIndex, Errors: FormErrors{},
	}
}

// parseAdminCopycatForm reads the posted form and the target it describes. A
// timeout that is not a number of seconds is an error on its field.
func parseAdminCopycatForm(r *http.Request) (AdminCopycatForm, copycat.Target, error) {
	f := AdminCopycatForm{
		Name: strings.TrimSpace(r.PostFormValue("name")), Kind: r.PostFormValue("kind"), Address: strings.TrimSpace(r.PostFormValue("address")),
		Syntax: r.PostFormValue("syntax"), Timeout: strings.TrimSpace(r.PostFormValue("timeout")),
		Enabled:   r.PostFormValue("enabled") == "1",
		ISBNIndex: strings.TrimSpace(r.PostFormValue("isbn_index")), TitleIndex: strings.TrimSpace(r.PostFormValue("title_index")),
		AuthorIndex: strings.TrimSpace(r.PostFormValue("author_index")), Errors: FormErrors{},
	}
	t := copycat.Target{
		Name: f.Name, Kind: copycat.Kind(f.Kind), Address: f.Address, Syntax: copycat.Syntax(f.Syntax),
		Enabled: f.Enabled, ISBNIndex: f.ISBNIndex, TitleIndex: f.TitleIndex, AuthorIndex: f.AuthorIndex,
	}
	if f.Timeout != "" {
		secs, err := strconv.ParseFloat(f.Timeout, 64)
		if err != nil || secs <= 0 || secs > 3600 {
			return f, t, stacks.FieldErrorf("timeout", stacks.EINVALID, "Enter the timeout in seconds, for example 5.")
		}
		t.Timeout = time.Duration(secs * float64(time.Second))
	}
	return f, t, nil
}

func (s *Server) renderAdminCopycat(w http.ResponseWriter, r *http.Request, status int, form AdminCopycatForm) {
	targets, err := s.copycat().Targets(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := &AdminCopycatView{Targets: targets, Form: form}
	s.Render(w, r, status, AdminCopycatPage(s.page(r, "Copy cataloguing targets", "admin"), v))
}

func (s *Server) handleAdminCopycat(w http.ResponseWriter, r *http.Request) {
	s.renderAdminCopycat(w, r, http.StatusOK, newAdminCopycatForm(copycat.Target{Kind: copycat.Z3950, Enabled: true, Timeout: copycat.DefaultTimeout}))
}

// adminCopycatRefused files a refusal on the form and reports whether it was
// one the form shows (else the caller shows an error page).
func adminCopycatRefused(f *AdminCopycatForm, err error) bool {
	if !isAdminFormError(err) {
		return false
	}
	f.Message = adminFormError(f.Errors, err)
	return true
}

func (s *Server) handleAdminCopycatAdd(w http.ResponseWriter, r *http.Request) {
	f, t, err := parseAdminCopycatForm(r)
	if err == nil {
		t, err = s.copycat().AddTarget(r.Context(), userFrom(r.Context()).Actor(), t)
	}
	if err != nil {
		if !adminCopycatRefused(&f, err) {
			s.Error(w, r, err)
			return
		}
		s.renderAdminCopycat(w, r, http.StatusUnprocessableEntity, f)
		return
	}
	s.Flash(r, "ok", "Target "+t.Name+" is added"+adminCopycatState(t)+".")
	redirect(w, r, adminCopycatPath, http.StatusSeeOther)
}

func adminCopycatState(t copycat.Target) string {
	if t.Enabled {
		return "; copy cataloguing searches it"
	}
	return ", disabled: searches skip it until it is enabled"
}

func (s *Server) renderAdminCopycatForm(w http.ResponseWriter, r *http.Request, status int, f AdminCopycatForm) {
	s.Render(w, r, status, AdminCopycatTargetPage(s.page(r, "Copy cataloguing target "+f.Name, "admin"), &f))
}

func (s *Server) handleAdminCopycatEdit(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	t, err := s.copycat().Target(r.Context(), id)
	if err != nil {
		s.Error(w, r, adminCopycatNotFound(err))
		return
	}
	s.renderAdminCopycatForm(w, r, http.StatusOK, newAdminCopycatForm(t))
}

func (s *Server) handleAdminCopycatUpdate(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	f, t, err := parseAdminCopycatForm(r)
	f.ID, t.ID = id, id
	if err == nil {
		t, err = s.copycat().UpdateTarget(r.Context(), userFrom(r.Context()).Actor(), t)
	}
	if err != nil {
		if !adminCopycatRefused(&f, err) {
			s.Error(w, r, adminCopycatNotFound(err))
			return
		}
		s.renderAdminCopycatForm(w, r, http.StatusUnprocessableEntity, f)
		return
	}
	s.Flash(r, "ok", "Target "+t.Name+" is saved"+adminCopycatState(t)+".")
	redirect(w, r, adminCopycatPath, http.StatusSeeOther)
}

func (s *Server) handleAdminCopycatDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	if err := s.copycat().DeleteTarget(r.Context(), userFrom(r.Context()).Actor(), id); err != nil {
		s.Error(w, r, adminCopycatNotFound(err))
		return
	}
	s.Flash(r, "ok", "The target is deleted; copy cataloguing no longer searches it.")
	redirect(w, r, adminCopycatPath, http.StatusSeeOther)
}

// adminCopycatNotFound says what a missing target means on these pages.
func adminCopycatNotFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no such copy cataloguing target; it may have been deleted. Go back to the list of targets.")
	}
	return err
}

// adminCopycatAttrs ties a control to its hint (id key+"-hint") and to the
// message about it, and marks it invalid when the server refused its value.
func adminCopycatAttrs(errs FormErrors, key string, hint bool) templ.Attributes {
	var ids []string
	if hint {
		ids = append(ids, key+"-hint")
	}
	a := templ.Attributes{}
	if errs.Has(key) {
		ids = append(ids, key+"-error")
		a["aria-invalid"] = "true"
	}
	if len(ids) > 0 {
		a["aria-describedby"] = strings.Join(ids, " ")
	}
	return a
}
