package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// PatronFormView is the create and edit form's view model.
type PatronFormView struct {
	// ID is 0 for a new patron.
	ID         int64
	Name       string
	In         patrons.Input
	Categories []patrons.Category
	Branches   []library.Branch
	Errors     FormErrors
}

// Action is where the form posts.
func (v *PatronFormView) Action() string {
	if v.ID == 0 {
		return "/patrons"
	}
	return patronURL(v.ID)
}

// CancelURL is where "Cancel" goes back to.
func (v *PatronFormView) CancelURL() string {
	if v.ID == 0 {
		return "/patrons"
	}
	return patronURL(v.ID)
}

func patronInputFrom(r *http.Request) patrons.Input {
	return patrons.Input{
		Card:           r.PostFormValue("card"),
		Surname:        r.PostFormValue("surname"),
		FirstName:      r.PostFormValue("first_name"),
		Email:          r.PostFormValue("email"),
		Phone:          r.PostFormValue("phone"),
		Address:        r.PostFormValue("address"),
		CategoryCode:   r.PostFormValue("category"),
		HomeBranchCode: r.PostFormValue("home_branch"),
		ExternalID:     r.PostFormValue("external_id"),
		Notes:          r.PostFormValue("notes"),
		DeskMessage:    r.PostFormValue("desk_message"),
		KeepHistory:    r.PostFormValue("keep_history") == "1",
		CardLost:       r.PostFormValue("card_lost") == "1",
	}
}

// loadPatronChoices fills the form's category and branch lists.
func (s *Server) loadPatronChoices(r *http.Request, v *PatronFormView) error {
	c, err := s.patrons.form.Choices(r.Context())
	v.Categories, v.Branches = c.Categories, c.Branches
	return err
}

// renderPatronForm shows the form; after a refused save (status 422) with the
// message beside its field, or at the top if it names no field.
func (s *Server) renderPatronForm(w http.ResponseWriter, r *http.Request, status int, v PatronFormView) {
	if v.Categories == nil {
		if err := s.loadPatronChoices(r, &v); err != nil {
			s.Error(w, r, err)
			return
		}
	}
	title := "New patron"
	if v.ID != 0 {
		title = "Edit " + v.Name
	}
	s.Render(w, r, status, PatronFormPage(s.page(r, title, "patrons"), v))
}

// patronFormFailed shows the form again if err is about one of its fields, and reports
// whether it did; other errors are for s.Error.
func (s *Server) patronFormFailed(w http.ResponseWriter, r *http.Request, v PatronFormView, err error) bool {
	field := stacks.ErrorField(err)
	if field == "" || stacks.ErrorCode(err) == stacks.EINTERNAL {
		return false
	}
	v.Errors = FormErrors{field: stacks.ErrorMessage(err)}
	s.renderPatronForm(w, r, http.StatusUnprocessableEntity, v)
	return true
}

// handlePatronNew shows an empty form; ?card= fills in the card number (the desk
// links here when a scanned card is unknown). The category defaults to the first
// listed, the home branch to the user's own.
func (s *Server) handlePatronNew(w http.ResponseWriter, r *http.Request) {
	v := PatronFormView{In: patrons.Input{
		Card:           strings.TrimSpace(r.URL.Query().Get("card")),
		HomeBranchCode: userFrom(r.Context()).BranchCode,
	}}
	if err := s.loadPatronChoices(r, &v); err != nil {
		s.Error(w, r, err)
		return
	}
	for _, c := range v.Categories {
		if c.Code == "ADULT" || v.In.CategoryCode == "" {
			v.In.CategoryCode = c.Code
		}
	}
	s.renderPatronForm(w, r, http.StatusOK, v)
}

func (s *Server) handlePatronCreate(w http.ResponseWriter, r *http.Request) {
	v := PatronFormView{In: patronInputFrom(r)}
	p, err := s.patrons.form.Register(r.Context(), userFrom(r.Context()).Actor(), v.In)
	if err != nil {
		if !s.patronFormFailed(w, r, v, err) {
			s.Error(w, r, err)
		}
		return
	}
	s.Flash(r, "ok", fmt.Sprintf("%s is registered with card %s, valid until %s.", p.Name(), p.Card, patronDay(p.ExpiresOn)))
	redirect(w, r, patronURL(p.ID), http.StatusSeeOther)
}

func (s *Server) handlePatronEdit(w http.ResponseWriter, r *http.Request) {
	id, err := patronID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	p, c, err := s.patrons.form.PatronToEdit(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := PatronFormView{ID: p.ID, Name: p.Name(), Categories: c.Categories, Branches: c.Branches, In: patrons.Input{
		Card: p.Card, Surname: p.Surname, FirstName: p.FirstName, Email: p.Email, Phone: p.Phone,
		Address: p.Address, CategoryCode: p.CategoryCode, HomeBranchCode: p.HomeBranchCode, Notes: p.Notes,
		DeskMessage: p.DeskMessage,
		KeepHistory: p.KeepHistory, ExternalID: p.ExternalID, CardLost: p.CardLost,
	}}
	s.renderPatronForm(w, r, http.StatusOK, v)
}

func (s *Server) handlePatronUpdate(w http.ResponseWriter, r *http.Request) {
	id, err := patronID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := PatronFormView{ID: id, In: patronInputFrom(r)}
	p, err := s.patrons.form.Edit(r.Context(), userFrom(r.Context()).Actor(), id, v.In)
	if err != nil {
		v.Name = strings.TrimSpace(v.In.FirstName + " " + v.In.Surname)
		if !s.patronFormFailed(w, r, v, err) {
			s.Error(w, r, err)
		}
		return
	}
	s.Flash(r, "ok", "The changes to "+p.Name()+" are saved.")
	redirect(w, r, patronURL(p.ID), http.StatusSeeOther)
}
