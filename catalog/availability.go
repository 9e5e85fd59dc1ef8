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

// hitsByBranch reads the records ids, in their order, with their availability
// by branch, in one statement: what hitsFor reads, by branch. Withdrawn copies
// are not counted.
func hitsByBranch(tx *db.Tx, ids []int64) ([]Hit, map[int64][]BranchAvailability, error) {
	avail := map[int64][]BranchAvailability{}
	if len(ids) == 0 {
		return nil, avail, nil
	}
	in, args := idArgs(ids)
	rows, err := tx.Query(`SELECT r.id, r.title, r.author, r.publisher, coalesce(r.year, 0),
			coalesce(b.code, ''), coalesce(b.name, ''), coalesce(min(i.call_number), ''), count(i.id),
			coalesce(sum(CASE WHEN i.status = 'available' THEN 1 ELSE 0 END), 0),
			coalesce(sum(CASE WHEN i.status = 'on_loan' THEN 1 ELSE 0 END), 0),
			coalesce(sum(CASE WHEN i.status = 'on_hold_shelf' THEN 1 ELSE 0 END), 0),
			coalesce(sum(CASE WHEN i.status NOT IN ('available', 'on_loan', 'on_hold_shelf') THEN 1 ELSE 0 END), 0), min(l.due_at)
		FROM records r
		LEFT JOIN items i ON i.record_id = r.id AND i.status <> 'withdrawn'
		LEFT JOIN branches b ON b.id = i.home_branch_id
		LEFT JOIN loans l ON l.item_id = i.id AND l.returned_at IS NULL
		WHERE r.id IN (`+in+`) GROUP BY r.id, b.id ORDER BY r.id, b.name`, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("search hits by branch: %w", err)
	}
	defer rows.Close()
	byID := map[int64]*Hit{}
	for rows.Next() {
		var h Hit
		var a BranchAvailability
		var copies int
		var due db.NullTime
		if err := rows.Scan(&h.RecordID, &h.Title, &h.Author, &h.Publisher, &h.Year, &a.BranchCode, &a.BranchName, &a.CallNumber, &copies,
			&a.OnShelf, &a.OnLoan, &a.OnHoldShelf, &a.Other, &due); err != nil {
			return nil, nil, fmt.Errorf("search hits by branch: %w", err)
		}
		a.NextDue = due.Time
		if byID[h.RecordID] == nil {
			byID[h.RecordID] = &h
		}
		if copies > 0 {
			byID[h.RecordID].Copies += copies
			byID[h.RecordID].Available += a.OnShelf
			avail[h.RecordID] = append(avail[h.RecordID], a)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	hits := make([]Hit, 0, len(ids))
	for _, id := range ids {
		if h := byID[id]; h != nil {
			hits = append(hits, *h)
		}
	}
	return hits, avail, nil
}
