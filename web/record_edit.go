package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/library"
)

// recordEditService is what the record and item forms need of the catalogue.
type recordEditService interface {
	CreateRecord(ctx context.Context, actor stacks.Actor, in catalog.RecordInput) (int64, error)
	UpdateRecord(ctx context.Context, actor stacks.Actor, id int64, in catalog.RecordInput) error
	RecordInput(ctx context.Context, id int64) (catalog.RecordInput, error)
	ItemForm(ctx context.Context, itemID, recordID int64) (catalog.ItemForm, error)
	NewItemForm(ctx context.Context, recordID int64) (catalog.ItemForm, error)
	CheckNewBarcode(ctx context.Context, barcode string) (string, error)
	AddItem(ctx context.Context, actor stacks.Actor, recordID int64, in catalog.ItemInput) (*catalog.Item, error)
	UpdateItem(ctx context.Context, actor stacks.Actor, id int64, in catalog.ItemInput, status string) (catalog.ItemSaved, error)
	recordMARCService
}

// recordEditRoutes mounts the forms that add and edit records and their items by
// hand. Every member of staff may edit the catalogue. The record page itself is
// mounted by catalogRoutes.
func (s *Server) recordEditRoutes(r chi.Router) {
	r.Get("/records/new", s.handleRecordNew)
	r.Post("/records", s.handleRecordCreate)
	r.Get("/records/{id}/edit", s.handleRecordEdit)
	r.Post("/records/{id}", s.handleRecordUpdate)
	r.Get("/records/{id}/items/new", s.handleItemNew)
	r.Post("/records/{id}/items", s.handleItemCreate)
	r.Get("/items/{id}/edit", s.handleItemEdit)
	r.Post("/items/{id}", s.handleItemUpdate)
	s.recordMARCRoutes(r)
}

// pathID reads the {id} of a URL. A malformed id names nothing, so it is "not
// found", with notFound as the message. Every page with an {id} reads it here.
func pathID(r *http.Request, notFound string) (int64, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, stacks.Errorf(stacks.ENOTFOUND, "%s", notFound)
	}
	return id, nil
}

func itemPathID(r *http.Request) (int64, error) {
	return pathID(r, "There is no item at "+r.URL.Path+". Search the catalogue for its record instead.")
}

// recordEditURL, itemNewURL and itemEditURL are the forms' paths, for links to them.
func recordEditURL(id int64) string { return recordURL(id) + "/edit" }

func itemNewURL(recordID int64) string { return recordURL(recordID) + "/items/new" }

func itemEditURL(id int64) string { return "/items/" + strconv.FormatInt(id, 10) + "/edit" }

// recordEditErrors returns the message of err beside its field, and whether err is about a
// field at all; other errors are for s.Error.
func recordEditErrors(err error) (FormErrors, bool) {
	field := stacks.ErrorField(err)
	if field == "" || stacks.ErrorCode(err) == stacks.EINTERNAL {
		return nil, false
	}
	return FormErrors{field: stacks.ErrorMessage(err)}, true
}

// RecordFormView is the model of the record form, new or edit.
type RecordFormView struct {
	// ID is 0 for a new record.
	ID     int64
	In     catalog.RecordInput
	Errors FormErrors
}

// Action is where the form posts.
func (v *RecordFormView) Action() string {
	if v.ID == 0 {
		return "/records"
	}
	return recordURL(v.ID)
}

// CancelURL is where "Cancel" goes back to.
func (v *RecordFormView) CancelURL() string {
	if v.ID == 0 {
		return "/search"
	}
	return recordURL(v.ID)
}

func (v *RecordFormView) title() string {
	if v.ID == 0 {
		return "New record"
	}
	return "Edit record"
}

// errFormBase refuses a record form whose hidden base is not a version
// number: the form is not one the server sent, or is damaged, and saving it
// against a guessed version could overwrite what was saved since.
var errFormBase = stacks.FieldErrorf("base", stacks.EINVALID, "This form is out of date, so nothing is saved: reload the record's edit form and make your changes again.")

// formBase reads a record form's hidden base (the quick form's, the MARC
// editor's), the version of the record it showed: 0 when absent; a malformed
// or negative one is errFormBase.
func formBase(b string) (int, error) {
	if b == "" {
		return 0, nil
	}
	base, err := strconv.Atoi(b)
	if err != nil || base < 0 {
		return 0, errFormBase
	}
	return base, nil
}

// recordInputFrom reads the record form, its base by formBase, with the rest
// of the form read for showing again when the base is refused.
func recordInputFrom(r *http.Request) (catalog.RecordInput, error) {
	in := catalog.RecordInput{
		Title:     r.PostFormValue("title"),
		Author:    r.PostFormValue("author"),
		ISBN:      r.PostFormValue("isbn"),
		Publisher: r.PostFormValue("publisher"),
		Year:      r.PostFormValue("year"),
		Subjects:  r.PostFormValue("subjects"),
	}
	var err error
	in.Base, err = formBase(r.PostFormValue("base"))
	return in, err
}

func (s *Server) renderRecordForm(w http.ResponseWriter, r *http.Request, status int, v RecordFormView) {
	s.Render(w, r, status, RecordFormPage(s.page(r, v.title(), "search"), v))
}

// recordFormFailed shows the form again, with status 422, if err is about one of its
// fields, and reports whether it did.
func (s *Server) recordFormFailed(w http.ResponseWriter, r *http.Request, v RecordFormView, err error) bool {
	errs, ok := recordEditErrors(err)
	if ok {
		v.Errors = errs
		s.renderRecordForm(w, r, http.StatusUnprocessableEntity, v)
	}
	return ok
}

func (s *Server) handleRecordNew(w http.ResponseWriter, r *http.Request) {
	s.renderRecordForm(w, r, http.StatusOK, RecordFormView{})
}

func (s *Server) handleRecordCreate(w http.ResponseWriter, r *http.Request) {
	in, err := recordInputFrom(r)
	v := RecordFormView{In: in}
	var id int64
	if err == nil {
		id, err = s.Catalog.CreateRecord(r.Context(), userFrom(r.Context()).Actor(), v.In)
	}
	if err != nil {
		if !s.recordFormFailed(w, r, v, err) {
			s.Error(w, r, err)
		}
		return
	}
	s.Flash(r, "ok", fmt.Sprintf("The record %q is in the catalogue. Add its items (copies) so that they can be lent.", recordEditShortTitle(v.In.Title)))
	redirect(w, r, recordURL(id), http.StatusSeeOther)
}

func (s *Server) handleRecordEdit(w http.ResponseWriter, r *http.Request) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := RecordFormView{ID: id}
	v.In, err = s.Catalog.RecordInput(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.renderRecordForm(w, r, http.StatusOK, v)
}

func (s *Server) handleRecordUpdate(w http.ResponseWriter, r *http.Request) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	in, err := recordInputFrom(r)
	v := RecordFormView{ID: id, In: in}
	if err == nil {
		err = s.Catalog.UpdateRecord(r.Context(), userFrom(r.Context()).Actor(), id, v.In)
	}
	if err != nil {
		if !s.recordFormFailed(w, r, v, err) {
			s.Error(w, r, err)
		}
		return
	}
	s.Flash(r, "ok", fmt.Sprintf("The changes to %q are saved.", recordEditShortTitle(v.In.Title)))
	redirect(w, r, recordURL(id), http.StatusSeeOther)
}

// recordEditShortTitle shortens a title for a message.
func recordEditShortTitle(title string) string {
	const max = 80
	if r := []rune(title); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return title
}

// ItemFormView is the model of the item form: add a copy to a record, or edit one.
type ItemFormView struct {
	// ID is 0 for a new item.
	ID          int64
	RecordID    int64
	RecordTitle string
	// Barcode is the item's saved barcode (the form's may have been changed).
	Barcode string
	In      catalog.ItemInput
	// Status is the status chosen; CurrentStatus the saved one, as staff read it
	// ("In transit to Westside").
	Status        string
	CurrentStatus string
	// InCirculation is set when a loan or a hold holds the item: its status is then
	// shown, not offered for change.
	InCirculation bool
	ItemTypes     []library.Named
	Branches      []library.Branch
	Errors        FormErrors
	// Checked is set on a new item's form shown again after its barcode was
	// checked (the form's default button, which a scanner's Enter presses
	// without JavaScript): the barcode is free and the focus moves on.
	Checked bool
}

// focusFirst is the field that has the focus when no field was refused.
func (v *ItemFormView) focusFirst() string {
	if v.Checked {
		return "item_type"
	}
	return "barcode"
}

// Action is where the form posts.
func (v *ItemFormView) Action() string {
	if v.ID == 0 {
		return recordURL(v.RecordID) + "/items"
	}
	return "/items/" + strconv.FormatInt(v.ID, 10)
}

func (v *ItemFormView) title() string {
	if v.ID == 0 {
		return "Add an item"
	}
	return "Edit item " + v.Barcode
}

// statusChoices are the statuses the form offers: those staff may set.
func (v *ItemFormView) statusChoices() []string { return catalog.StaffStatuses() }

func itemInputFrom(r *http.Request) catalog.ItemInput {
	return catalog.ItemInput{
		Barcode:        r.PostFormValue("barcode"),
		ItemTypeCode:   r.PostFormValue("item_type"),
		HomeBranchCode: r.PostFormValue("home_branch"),
		CallNumber:     r.PostFormValue("call_number"),
		Location:       r.PostFormValue("location"),
		Price:          r.PostFormValue("price"),
	}
}

// fill sets what the item form shows besides the input: the record (and, for an
// existing item, its saved barcode and status) and the choices. With saved, the
// input is the existing item's saved values.
func (v *ItemFormView) fill(f catalog.ItemForm, saved bool) {
	if d := f.Item; d != nil {
		if saved {
			v.In, v.Status = d.Input, d.Status
		}
		v.Barcode, v.CurrentStatus, v.InCirculation = d.Barcode, d.StatusText(), d.InCirculation()
	}
	v.RecordID, v.RecordTitle = f.RecordID, f.RecordTitle
	v.ItemTypes, v.Branches = f.ItemTypes, f.Branches
}

// loadItemForm reads and fills what the item form shows besides the input (fill).
func (s *Server) loadItemForm(ctx context.Context, v *ItemFormView, saved bool) error {
	f, err := s.Catalog.ItemForm(ctx, v.ID, v.RecordID)
	if err != nil {
		return err
	}
	v.fill(f, saved)
	return nil
}

func (s *Server) renderItemForm(w http.ResponseWriter, r *http.Request, status int, v ItemFormView) {
	s.Render(w, r, status, ItemFormPage(s.page(r, v.title(), "search"), v))
}

// itemFormFailed shows the form again, with status 422, if err is about one of its
// fields, and reports whether it did.
func (s *Server) itemFormFailed(w http.ResponseWriter, r *http.Request, v ItemFormView, err error) bool {
	errs, ok := recordEditErrors(err)
	if !ok {
		return false
	}
	v.Errors = errs
	if err := s.loadItemForm(r.Context(), &v, false); err != nil {
		s.Error(w, r, err)
		return true
	}
	s.renderItemForm(w, r, http.StatusUnprocessableEntity, v)
	return true
}

// handleItemNew shows the form for a new copy, filled in as the record's newest
// copy is (catalog.NewItemDefaults: item type, call number, shelving location,
// price), or as a book if it has none, at the home branch of ?home_branch (which
// "Save and add another" passes on) or else the user's branch: staff adding
// copies scan the barcode and save.
func (s *Server) handleItemNew(w http.ResponseWriter, r *http.Request) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := ItemFormView{RecordID: id}
	f, err := s.Catalog.NewItemForm(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v.In = f.Defaults
	v.fill(f, false)
	v.In.HomeBranchCode = userFrom(r.Context()).BranchCode
	if code := strings.ToUpper(strings.TrimSpace(r.URL.Query().Get("home_branch"))); code != "" {
		for _, b := range v.Branches {
			if b.Code == code {
				v.In.HomeBranchCode = code
			}
		}
	}
	if v.In.ItemTypeCode == "" {
		for _, t := range v.ItemTypes {
			if t.Code == "BOOK" || v.In.ItemTypeCode == "" {
				v.In.ItemTypeCode = t.Code
			}
		}
	}
	s.renderItemForm(w, r, http.StatusOK, v)
}

// The new-item form's submit buttons. The first in the form, "Check barcode" beside
// the Barcode field, is the one the Enter key presses (HTML's implicit submission):
// a scanner's Enter after the barcode checks it and moves on, and never saves a
// copy before staff have seen the rest. "Add item" and "Save and add another" save.
const (
	itemStepField   = "step"
	itemStepBarcode = "barcode"
	itemThenField   = "then"
	itemThenAnother = "another"
)

// handleItemCheckBarcode shows the new-item form again after "Check barcode" (or
// Enter in the Barcode field, without JavaScript): the barcode refused beside the
// field, or else the form as sent, with the focus on the next field. Nothing is
// saved.
func (s *Server) handleItemCheckBarcode(w http.ResponseWriter, r *http.Request, v ItemFormView) {
	var err error
	v.In.Barcode, err = s.Catalog.CheckNewBarcode(r.Context(), v.In.Barcode)
	if err != nil {
		if !s.itemFormFailed(w, r, v, err) {
			s.Error(w, r, err)
		}
		return
	}
	v.Checked = true
	if err := s.loadItemForm(r.Context(), &v, false); err != nil {
		s.Error(w, r, err)
		return
	}
	s.renderItemForm(w, r, http.StatusOK, v)
}

func (s *Server) handleItemCreate(w http.ResponseWriter, r *http.Request) {
	recID, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := ItemFormView{RecordID: recID, In: itemInputFrom(r)}
	if r.PostFormValue(itemStepField) == itemStepBarcode {
		s.handleItemCheckBarcode(w, r, v)
		return
	}
	it, err := s.Catalog.AddItem(r.Context(), userFrom(r.Context()).Actor(), recID, v.In)
	if err != nil {
		if !s.itemFormFailed(w, r, v, err) {
			s.Error(w, r, err)
		}
		return
	}
	if r.PostFormValue(itemThenField) == itemThenAnother {
		s.Flash(r, "ok", fmt.Sprintf("Item %s is added to %q, available at %s. Scan the next copy's barcode.", it.Barcode, recordEditShortTitle(it.Title), it.HomeBranchName))
		redirect(w, r, itemNewURL(recID)+"?home_branch="+url.QueryEscape(it.HomeBranchCode), http.StatusSeeOther)
		return
	}
	s.Flash(r, "ok", fmt.Sprintf("Item %s is added to %q, available at %s.", it.Barcode, recordEditShortTitle(it.Title), it.HomeBranchName))
	redirect(w, r, recordURL(recID), http.StatusSeeOther)
}

func (s *Server) handleItemEdit(w http.ResponseWriter, r *http.Request) {
	id, err := itemPathID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := ItemFormView{ID: id}
	err = s.loadItemForm(r.Context(), &v, true)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.renderItemForm(w, r, http.StatusOK, v)
}

func (s *Server) handleItemUpdate(w http.ResponseWriter, r *http.Request) {
	id, err := itemPathID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := ItemFormView{ID: id, In: itemInputFrom(r), Status: r.PostFormValue("status")}
	res, err := s.Catalog.UpdateItem(r.Context(), userFrom(r.Context()).Actor(), id, v.In, v.Status)
	if err != nil {
		if !s.itemFormFailed(w, r, v, err) {
			s.Error(w, r, err)
		}
		return
	}
	it := res.Item
	msg := fmt.Sprintf("The changes to item %s are saved; it is %s.", it.Barcode, strings.ToLower(catalog.StatusLabel(it.Status)))
	if res.HoldsCancelled > 0 {
		msg += fmt.Sprintf(" %s on this copy cancelled: tell the patrons.", countHolds(res.HoldsCancelled))
	}
	s.Flash(r, "ok", msg)
	redirect(w, r, recordURL(it.RecordID), http.StatusSeeOther)
}
