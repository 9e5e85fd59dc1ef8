package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
)

// holdsService is what the Holds page and a hold's forms ask of holds.
type holdsService interface {
	BranchHolds(ctx context.Context, code, home string, loc *time.Location) (holds.BranchHolds, error)
	Hold(ctx context.Context, id int64) (holds.Hold, error)
	MoveHold(ctx context.Context, actor stacks.Actor, id int64, to int) (holds.Hold, error)
	SuspendHold(ctx context.Context, actor stacks.Actor, id int64, until string, loc *time.Location) (holds.Hold, error)
	ResumeHold(ctx context.Context, actor stacks.Actor, id int64) (holds.Hold, error)
}

// holdDeskService is what the hold forms that move a copy on ask of circulation.
type holdDeskService interface {
	CancelHold(ctx context.Context, actor stacks.Actor, holdID int64, reason string) (circulation.HoldOutcome, error)
	ExpireHold(ctx context.Context, actor stacks.Actor, holdID int64) (circulation.HoldOutcome, error)
	MarkMissing(ctx context.Context, actor stacks.Actor, barcode string) error
	PlaceHoldFor(ctx context.Context, req holds.PlaceRequest, item string) (holds.Placed, error)
}

// holdRoutes mounts the Holds page (hold shelf, expired holds, pull list), the hold
// slip, the small forms that change one hold, and placing a hold from the patron
// page. The forms are embedded in other pages (Holds, the patron page, the record
// page), so each posts a "return" path and goes back there with a flash.
func (s *Server) holdRoutes(r chi.Router) {
	r.Get("/holds", s.handleHoldsPage)
	r.Get("/holds/{id}/slip", s.handleHoldSlip)
	r.Post("/holds/{id}/move", s.handleHoldMove)
	r.Post("/holds/{id}/suspend", s.handleHoldSuspend)
	r.Post("/holds/{id}/resume", s.handleHoldResume)
	r.Post("/holds/{id}/cancel", s.handleHoldCancel)
	r.Post("/holds/{id}/expire", s.handleHoldExpire)
	r.Post("/holds/pull/not-on-shelf", s.handlePullNotOnShelf)
	r.Post("/patrons/{id}/holds", s.handlePatronPlaceHold)
}

// holdURL is the path of one hold's actions.
func holdURL(id int64) string { return "/holds/" + strconv.FormatInt(id, 10) }

// holdIDString is a hold's id in an element id.
func holdIDString(h holds.Hold) string { return strconv.FormatInt(h.ID, 10) }

// holdsPageURL is the Holds page of a branch.
func holdsPageURL(branchCode string) string { return "/holds?branch=" + url.QueryEscape(branchCode) }

// holdID reads the {id} of a hold URL. A malformed id names no hold.
func holdID(r *http.Request) (int64, error) {
	return pathID(r, "There is no hold at "+r.URL.Path+". Find the hold on the patron's page or the Holds page.")
}

// holdReturn is where a hold form goes back to: its "return" field when that is a
// path on this site, else the Holds page.
func holdReturn(r *http.Request) string { return safeReturn(r, "/holds") }

// safeReturn is where a form embedded in several pages goes back to: its "return"
// field when that is a path on this site (as safeNext judges the login's next),
// else fallback. It keeps the form from becoming an open redirect.
func safeReturn(r *http.Request, fallback string) string {
	back := r.PostFormValue("return")
	if back == "" || safeNext(back) != back {
		return fallback
	}
	return back
}

// HoldsView is the Holds page of one branch: the hold shelf, the holds on it past
// their pickup date, and the pull list.
type HoldsView struct {
	Branches []library.Branch
	Branch   library.Branch
	// Shelf is every waiting hold at the branch, soonest deadline first; Expired, the
	// ones whose pickup time is over.
	Shelf   []holds.Hold
	Expired []holds.Hold
	Pull    []holds.PullItem
	Loc     *time.Location
	Now     time.Time
}

// expired reports whether a waiting hold's pickup time is over (as
// circulation.ExpireHold judges it).
func (v *HoldsView) expired(h holds.Hold) bool { return v.Now.After(h.PickupBy) }

// back is the return path of the page's forms.
func (v *HoldsView) back() string { return holdsPageURL(v.Branch.Code) }

func (s *Server) handleHoldsPage(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	code := strings.TrimSpace(r.URL.Query().Get("branch"))
	bh, err := s.Holds.BranchHolds(r.Context(), code, userFrom(r.Context()).BranchCode, prefs.Location)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := &HoldsView{Branches: bh.Branches, Branch: bh.Branch, Shelf: bh.Shelf, Pull: bh.Pull, Loc: prefs.Location, Now: bh.Now}
	for _, h := range v.Shelf {
		if v.expired(h) {
			v.Expired = append(v.Expired, h)
		}
	}
	s.Render(w, r, http.StatusOK, HoldsPage(s.page(r, "Holds", "holds"), v))
}

// holdAction runs one of the small forms on a hold: do makes the change and returns
// the message to flash. A refusal (a stacks.Error) is flashed as an error; either way
// the browser goes back to the form's page. Only a fault of ours shows an error page.
func (s *Server) holdAction(w http.ResponseWriter, r *http.Request, do func(ctx context.Context, actor stacks.Actor, id int64) (string, error)) {
	back := holdReturn(r)
	id, err := holdID(r)
	var msg string
	if err == nil {
		msg, err = do(r.Context(), userFrom(r.Context()).Actor(), id)
	}
	switch {
	case err == nil:
		s.Flash(r, "ok", msg)
	case stacks.ErrorCode(err) == stacks.EINTERNAL:
		s.Error(w, r, err)
		return
	default:
		s.Flash(r, "error", stacks.ErrorMessage(err))
	}
	redirect(w, r, back, http.StatusSeeOther)
}

func (s *Server) handleHoldMove(w http.ResponseWriter, r *http.Request) {
	s.holdAction(w, r, func(ctx context.Context, actor stacks.Actor, id int64) (string, error) {
		to, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("to")))
		if err != nil {
			return "", stacks.FieldErrorf("to", stacks.EINVALID, "Give the new place in the queue as a number (1 is first).")
		}
		h, err := s.Holds.MoveHold(ctx, actor, id, to)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("The hold for %s on %s is now number %d in the queue.", h.PatronName, h.Title, h.Priority), nil
	})
}

func (s *Server) handleHoldSuspend(w http.ResponseWriter, r *http.Request) {
	s.holdAction(w, r, func(ctx context.Context, actor stacks.Actor, id int64) (string, error) {
		prefs, err := s.preferences(ctx)
		if err != nil {
			return "", err
		}
		until := strings.TrimSpace(r.PostFormValue("until"))
		h, err := s.Holds.SuspendHold(ctx, actor, id, until, prefs.Location)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("The hold for %s on %s is suspended until %s; it keeps its place in the queue.", h.PatronName, h.Title, h.SuspendedUntil), nil
	})
}

func (s *Server) handleHoldResume(w http.ResponseWriter, r *http.Request) {
	s.holdAction(w, r, func(ctx context.Context, actor stacks.Actor, id int64) (string, error) {
		h, err := s.Holds.ResumeHold(ctx, actor, id)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("The hold for %s on %s is active again.", h.PatronName, h.Title), nil
	})
}

func (s *Server) handleHoldCancel(w http.ResponseWriter, r *http.Request) {
	s.holdAction(w, r, func(ctx context.Context, actor stacks.Actor, id int64) (string, error) {
		out, err := s.Circ.CancelHold(ctx, actor, id, strings.TrimSpace(r.PostFormValue("reason")))
		if err != nil {
			return "", err
		}
		return s.closedHoldMessage(ctx, "Cancelled", id, out)
	})
}

func (s *Server) handleHoldExpire(w http.ResponseWriter, r *http.Request) {
	s.holdAction(w, r, func(ctx context.Context, actor stacks.Actor, id int64) (string, error) {
		out, err := s.Circ.ExpireHold(ctx, actor, id)
		if err != nil {
			return "", err
		}
		return s.closedHoldMessage(ctx, "Cleared", id, out)
	})
}

// handlePullNotOnShelf marks a copy on the pull list that staff could not find as
// missing, so that the hold is asked of the next copy or branch at once.
func (s *Server) handlePullNotOnShelf(w http.ResponseWriter, r *http.Request) {
	back := holdReturn(r)
	barcode := strings.TrimSpace(r.PostFormValue("barcode"))
	err := s.Circ.MarkMissing(r.Context(), userFrom(r.Context()).Actor(), barcode)
	switch {
	case err == nil:
		s.Flash(r, "ok", fmt.Sprintf("%s is marked missing; its hold is asked of the next copy on a shelf, here or at another branch. Check it in if it turns up.", barcode))
	case stacks.ErrorCode(err) == stacks.EINTERNAL:
		s.Error(w, r, err)
		return
	default:
		s.Flash(r, "error", stacks.ErrorMessage(err))
	}
	redirect(w, r, back, http.StatusSeeOther)
}

// closedHoldMessage says which hold was closed and where its copy goes now: "Cleared
// the hold for X on T; I00042 now fills the hold for Y (pickup Eastside)."
func (s *Server) closedHoldMessage(ctx context.Context, verb string, id int64, out circulation.HoldOutcome) (string, error) {
	h, err := s.Holds.Hold(ctx, id)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("%s the hold for %s on %s", verb, h.PatronName, h.Title)
	switch {
	case out.Barcode == "":
	case out.Next != nil && out.Next.InTransit:
		msg += fmt.Sprintf("; %s now fills the hold for %s (pickup %s): send it there", out.Barcode, out.Next.PatronName, out.Next.PickupBranchName)
	case out.Next != nil:
		msg += fmt.Sprintf("; %s now fills the hold for %s (pickup %s): keep it on the hold shelf", out.Barcode, out.Next.PatronName, out.Next.PickupBranchName)
	case out.TransferTo != nil:
		msg += fmt.Sprintf("; send %s to %s", out.Barcode, out.TransferTo.Name)
	default:
		msg += fmt.Sprintf("; put %s back on the shelf", out.Barcode)
	}
	return msg + ".", nil
}

// HoldSlipView is a printable slip for a copy set aside for a hold.
type HoldSlipView struct {
	Library string
	Branch  string
	Hold    holds.Hold
	Loc     *time.Location
	Now     time.Time
}

func (s *Server) handleHoldSlip(w http.ResponseWriter, r *http.Request) {
	id, err := holdID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := &HoldSlipView{Library: prefs.LibraryName, Branch: userFrom(r.Context()).BranchName, Loc: prefs.Location, Now: s.DB.Now()}
	v.Hold, err = s.Holds.Hold(r.Context(), id)
	if err == nil && v.Hold.TrappedBarcode == "" {
		err = stacks.Errorf(stacks.ECONFLICT, "No copy is set aside for the hold of %s on %s yet, so there is no slip to print. Check in a copy to set it aside.",
			v.Hold.PatronName, v.Hold.Title)
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, HoldSlipPage(s.page(r, "Hold slip", "holds"), v))
}

// PatronHoldsView is the patron page's Holds section: the patron's open holds with
// their forms, and the Place hold form. It renders itself, so the patron page keeps
// it as its Holds component, and the place-hold handler can put what was typed, the
// warnings to confirm and the messages back into it.
type PatronHoldsView struct {
	Patron   *patrons.Patron
	Holds    []holds.Hold
	Branches []library.Branch
	Loc      *time.Location
	// Today and Tomorrow are local dates, YYYY-MM-DD.
	Today    string
	Tomorrow string

	// The Place hold form: what was typed, the warnings staff must confirm, and the
	// messages, keyed "item", "pickup" or "" (about the hold as a whole).
	Item     string
	Pickup   string
	Warnings []holds.Warning
	Errors   FormErrors
}

// Render implements templ.Component.
func (v *PatronHoldsView) Render(ctx context.Context, w io.Writer) error {
	return patronHoldsSection(v).Render(ctx, w)
}

// back is the return path of the section's forms.
func (v *PatronHoldsView) back() string { return patronURL(v.Patron.ID) }

// patronHoldsView is the patron page's Holds section for the patron's holds
// and the branches to pick up at, on the page's time now.
func patronHoldsView(p *patrons.Patron, hs []holds.Hold, branches []library.Branch, loc *time.Location, now time.Time) *PatronHoldsView {
	return &PatronHoldsView{Patron: p, Holds: hs, Branches: branches, Loc: loc, Pickup: p.HomeBranchCode, Errors: FormErrors{},
		Today: now.In(loc).Format(db.DayFormat), Tomorrow: now.In(loc).AddDate(0, 0, 1).Format(db.DayFormat)}
}

// handlePatronPlaceHold places a hold for the patron on the title of a copy (by
// barcode) or of an ISBN. Warnings (the patron already holds it, or has a copy out)
// show the patron page again with "Place hold anyway"; a refusal shows it with the
// message in the form.
func (s *Server) handlePatronPlaceHold(w http.ResponseWriter, r *http.Request) {
	id, err := patronID(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	item, pickup := strings.TrimSpace(r.PostForm.Get("item")), r.PostForm.Get("pickup")
	placed, err := s.Circ.PlaceHoldFor(r.Context(), holds.PlaceRequest{
		Actor:            userFrom(r.Context()).Actor(),
		PatronID:         id,
		PickupBranchCode: pickup,
		Confirm:          r.PostForm["confirm"],
	}, item)
	keep := func(warnings []holds.Warning, field, msg string) func(*PatronView) {
		return func(v *PatronView) {
			hv, ok := v.Holds.(*PatronHoldsView)
			if !ok {
				return
			}
			hv.Item, hv.Pickup, hv.Warnings = item, pickup, warnings
			if msg != "" {
				hv.Errors[field] = msg
			}
		}
	}
	var warn *holds.WarningError
	switch {
	case err == nil:
		s.Flash(r, "ok", fmt.Sprintf("Hold placed for %s: %s, position %d, pickup at %s.",
			placed.PatronName, placed.Title, placed.Position, placed.PickupBranchName))
		redirect(w, r, patronURL(id), http.StatusSeeOther)
	case errors.As(err, &warn):
		s.showPatron(w, r, id, http.StatusConflict, keep(warn.Warnings, "", ""))
	case stacks.ErrorCode(err) != stacks.EINTERNAL:
		field := stacks.ErrorField(err)
		switch field {
		case "item", "pickup":
		case "barcode":
			field = "item"
		default:
			field = ""
		}
		s.showPatron(w, r, id, kit.CodeStatus(stacks.ErrorCode(err)), keep(nil, field, stacks.ErrorMessage(err)))
	default:
		s.Error(w, r, err)
	}
}
