package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks/circulation"
)

// transferRoutes mounts the Transfers page (what is in transit to and from the
// staff user's branch) and the transit slip of a checkin that sent an item away.
func (s *Server) transferRoutes(r chi.Router) {
	r.Get("/transfers", s.handleTransfersPage)
	r.Get("/transfers/slip/{id}", s.handleTransferSlip)
	r.Get("/transfers/item/{id}/slip", s.handleItemTransferSlip)
}

// transitSlipURL is the slip of a transfer on the Transfers page: its checkin's,
// or the item's own when no checkin sent it (a hold cancelled or cleared passed
// the copy on).
func transitSlipURL(t circulation.Transfer) string {
	if t.CheckinID != 0 {
		return transferSlipURL(t.CheckinID)
	}
	return "/transfers/item/" + strconv.FormatInt(t.ItemID, 10) + "/slip"
}

// transferSlipURL is the transit slip of the checkin that sent an item away.
func transferSlipURL(checkinID int64) string {
	return "/transfers/slip/" + strconv.FormatInt(checkinID, 10)
}

// TransfersView is the Transfers page of the staff user's branch.
type TransfersView struct {
	Branch string
	circulation.BranchTransfers
	Loc *time.Location
}

// transferService is what the Transfers page and the transit slips ask of
// circulation.
type transferService interface {
	Transfers(ctx context.Context, branchID int64) (circulation.BranchTransfers, error)
	TransferSlip(ctx context.Context, checkinID int64) (circulation.Transfer, error)
	ItemTransferSlip(ctx context.Context, itemID int64) (circulation.Transfer, error)
}

func (s *Server) handleTransfersPage(w http.ResponseWriter, r *http.Request) {
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	u := userFrom(r.Context())
	v := &TransfersView{Branch: u.BranchName, Loc: prefs.Location}
	v.BranchTransfers, err = s.Circ.Transfers(r.Context(), u.BranchID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, TransfersPage(s.page(r, "Transfers", "transfers"), v))
}

// TransferSlipView is the printable slip that travels with an item to its
// destination.
type TransferSlipView struct {
	Library  string
	Transfer circulation.Transfer
	Loc      *time.Location
}

func (s *Server) handleTransferSlip(w http.ResponseWriter, r *http.Request) {
	s.transferSlip(w, r, s.Circ.TransferSlip)
}

// handleItemTransferSlip prints the slip of an item's current transit, for a copy
// that no checkin sent on its way.
func (s *Server) handleItemTransferSlip(w http.ResponseWriter, r *http.Request) {
	s.transferSlip(w, r, s.Circ.ItemTransferSlip)
}

// transferSlip prints the transit slip that find returns for the path's id (a
// checkin's or an item's).
func (s *Server) transferSlip(w http.ResponseWriter, r *http.Request, find func(context.Context, int64) (circulation.Transfer, error)) {
	id, err := pathID(r, "There is no transit slip at "+r.URL.Path+". Find the item on the Transfers page.")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := &TransferSlipView{Library: prefs.LibraryName, Loc: prefs.Location}
	v.Transfer, err = find(r.Context(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, TransferSlipPage(s.page(r, "Transit slip", "transfers"), v))
}
