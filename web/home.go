package web

import (
	"net/http"

	"github.com/stacks-ils/stacks/db"
)

func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	var st HomeStats
	err := s.DB.Read(r.Context(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT
			(SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id
				WHERE l.returned_at IS NULL AND i.home_branch_id = ?1),
			(SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id
				WHERE l.returned_at IS NULL AND i.home_branch_id = ?1 AND l.due_at < ?2),
			(SELECT count(*) FROM holds WHERE status = 'waiting' AND pickup_branch_id = ?1),
			(SELECT count(*) FROM holds WHERE status = 'queued' AND pickup_branch_id = ?1)`,
			u.BranchID, db.FormatTime(tx.Now())).Scan(&st.OnLoan, &st.Overdue, &st.HoldsWaiting, &st.HoldsQueued)
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, HomePage(s.page(r, "Start", ""), st))
}
