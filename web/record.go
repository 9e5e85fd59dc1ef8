package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/patrons"
)

// recordPageService is what the record page and its hold form ask of
// circulation: the record with its hold queue, read together, and the patron a
// card or name names.
type recordPageService interface {
	RecordWithHolds(ctx context.Context, id int64) (circulation.RecordHolds, error)
	IdentifyPatron(ctx context.Context, input string, limit int) (patrons.Identified, error)
}

// recordID reads the {id} of a record URL.
func recordID(r *http.Request) (int64, error) {
	return pathID(r, "There is no record at "+r.URL.Path+". Search the catalogue instead.")
}

func (s *Server) handleRecord(w http.ResponseWriter, r *http.Request) {
	id, err := recordID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	rh, err := s.Circ.RecordWithHolds(r.Context(), id)
	if err != nil {
		if stacks.ErrorCode(err) == stacks.ENOTFOUND && s.redirectMerged(w, r, id) {
			return
		}
		s.Error(w, r, err)
		return
	}
	v := &RecordView{Loc: prefs.Location, Record: rh.Record, MARC: catalog.ViewMARC(rh.Record.MARC), Items: rh.Copies, Queue: rh.Queue,
		Today: rh.Now.In(prefs.Location).Format(db.DayFormat)}
	s.Render(w, r, http.StatusOK, RecordPage(s.page(r, v.Record.Title, "search"), v))
}

// loadPlaceHoldForm reads the record, the branches and the chosen copy.
func (s *Server) loadPlaceHoldForm(r *http.Request, f *PlaceHoldForm, itemParam string) error {
	id, err := recordID(r)
	if err != nil {
		return err
	}
	var items []catalog.CopyStatus
	if f.Record, items, f.Branches, err = s.Catalog.RecordWithBranches(r.Context(), id); err != nil {
		return err
	}
	if itemParam != "" {
		itemID, _ := strconv.ParseInt(itemParam, 10, 64)
		for _, it := range items {
			if it.ID == itemID {
				f.ItemID, f.Barcode = it.ID, it.Barcode
			}
		}
		if f.ItemID == 0 {
			return stacks.Errorf(stacks.ENOTFOUND, "That copy does not belong to %s.", f.Record.Title)
		}
	}
	return nil
}

func (s *Server) handlePlaceHoldForm(w http.ResponseWriter, r *http.Request) {
	f := &PlaceHoldForm{Errors: FormErrors{}, Pickup: userFrom(r.Context()).BranchCode}
	if err := s.loadPlaceHoldForm(r, f, r.URL.Query().Get("item")); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, PlaceHoldPage(s.page(r, "Place hold", "search"), f))
}

// maxHoldMatches is how many patrons a name typed for the card may list.
const maxHoldMatches = 50

// handlePlaceHold places the hold for the patron named in the "Card number" field:
// a card number, or a name (patrons.Identify). A name that matches several patrons
// shows them, each with a button that sends the form again with that card in
// "choose"; a name or card that matches nobody comes back with the message beside
// the field.
func (s *Server) handlePlaceHold(w http.ResponseWriter, r *http.Request) {
	f := &PlaceHoldForm{Errors: FormErrors{}, Card: strings.TrimSpace(r.PostForm.Get("card")), Pickup: r.PostForm.Get("pickup")}
	if chosen := strings.TrimSpace(r.PostForm.Get("choose")); chosen != "" {
		f.Card = chosen
	}
	if err := s.loadPlaceHoldForm(r, f, r.PostForm.Get("item")); err != nil {
		s.Error(w, r, err)
		return
	}
	found, err := s.Circ.IdentifyPatron(r.Context(), f.Card, maxHoldMatches)
	switch {
	case err != nil && stacks.ErrorCode(err) != stacks.EINTERNAL:
		f.Errors["card"] = stacks.ErrorMessage(err)
		s.Render(w, r, http.StatusUnprocessableEntity, PlaceHoldPage(s.page(r, "Place hold", "search"), f))
		return
	case err != nil:
		s.Error(w, r, err)
		return
	case found.Patron == nil:
		f.Matches, f.MoreMatches = found.Matches, found.More
		s.Render(w, r, http.StatusOK, PlaceHoldPage(s.page(r, "Place hold", "search"), f))
		return
	}
	f.Card = found.Patron.Card
	placed, err := s.Circ.PlaceHold(r.Context(), holds.PlaceRequest{
		Actor:            userFrom(r.Context()).Actor(),
		RecordID:         f.Record.ID,
		ItemID:           f.ItemID,
		PatronID:         found.Patron.ID,
		PickupBranchCode: f.Pickup,
		Confirm:          r.PostForm["confirm"],
	})
	var warn *holds.WarningError
	switch {
	case err == nil:
		s.Flash(r, "ok", "Hold placed for "+placed.PatronName+" ("+placed.PatronCard+"): "+placed.Title+
			", pickup at "+placed.PickupBranchName+", position "+strconv.Itoa(placed.Position)+" in the queue.")
		redirect(w, r, recordURL(f.Record.ID), http.StatusSeeOther)
	case errors.As(err, &warn):
		f.Warnings = warn.Warnings
		s.Render(w, r, http.StatusConflict, PlaceHoldPage(s.page(r, "Place hold", "search"), f))
	case stacks.ErrorCode(err) != stacks.EINTERNAL:
		field := stacks.ErrorField(err)
		if field == "" && stacks.ErrorCode(err) == stacks.ENOTFOUND {
			field = "card"
		}
		f.Errors[field] = stacks.ErrorMessage(err)
		s.Render(w, r, kit.CodeStatus(stacks.ErrorCode(err)), PlaceHoldPage(s.page(r, "Place hold", "search"), f))
	default:
		s.Error(w, r, err)
	}
}
