package catalog

import (
	"fmt"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// BranchAvailability says where a record's copies are at one branch (their home
// branch), as a patron asks it: how many are on the shelf, on loan (and the
// soonest one is due back), on the hold shelf for someone, or elsewhere (in
// transit, missing, lost). Withdrawn copies are not counted: they are no longer
// part of the collection.
type BranchAvailability struct {
	BranchCode string
	BranchName string
	// CallNumber is one copy's call number there (the lowest), to find it on the
	// shelf.
	CallNumber  string
	OnShelf     int
	OnLoan      int
	OnHoldShelf int
	Other       int
	// NextDue is when the first copy on loan is due back; zero when none is.
	NextDue time.Time
}

// AvailabilityByBranch returns, for each of the records ids, its copies' status
// by home branch (sorted by branch name), in one query: a search page asks it for
// its twenty hits at once.
func AvailabilityByBranch(tx *db.Tx, ids []int64) (map[int64][]BranchAvailability, error) {
	out := map[int64][]BranchAvailability{}
	if len(ids) == 0 {
		return out, nil
	}
	in, args := idArgs(ids)
	rows, err := tx.Query(`SELECT i.record_id, b.code, b.name, min(i.call_number),
			sum(i.status = 'available'), sum(i.status = 'on_loan'), sum(i.status = 'on_hold_shelf'),
			sum(i.status NOT IN ('available', 'on_loan', 'on_hold_shelf')), min(l.due_at)
		FROM items i JOIN branches b ON b.id = i.home_branch_id
		LEFT JOIN loans l ON l.item_id = i.id AND l.returned_at IS NULL
		WHERE i.record_id IN (`+in+`) AND i.status <> 'withdrawn'
		GROUP BY i.record_id, b.id ORDER BY i.record_id, b.name`, args...)
	if err != nil {
		return nil, fmt.Errorf("availability by branch: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var a BranchAvailability
		var due db.NullTime
		if err := rows.Scan(&id, &a.BranchCode, &a.BranchName, &a.CallNumber, &a.OnShelf, &a.OnLoan, &a.OnHoldShelf, &a.Other, &due); err != nil {
			return nil, fmt.Errorf("availability by branch: %w", err)
		}
		a.NextDue = due.Time
		out[id] = append(out[id], a)
	}
	return out, rows.Err()
}
