package web

import (
	"context"
	"net/http"

	"github.com/stacks-ils/stacks/circulation"
)

// homeService is what the start page asks of circulation.
type homeService interface {
	BranchCounts(ctx context.Context, branchID int64) (circulation.BranchCounts, error)
}

func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	st, err := s.Circ.BranchCounts(r.Context(), userFrom(r.Context()).BranchID)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, HomePage(s.page(r, "Start", ""), HomeStats(st)))
}
