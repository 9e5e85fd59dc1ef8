package patrons

import (
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks/db"
)

// FindByIDs returns the patrons with the given ids, by id, in one statement: for a
// page that names many patrons by the ids other tables keep (the SIP lockouts of
// wrong PINs). An id without a patron (deleted since) is absent from the map.
func FindByIDs(tx *db.Tx, ids []int64) (map[int64]*Patron, error) {
	out := make(map[int64]*Patron, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := tx.Query(patronSelect+` WHERE p.id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("find patrons by id: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanPatron(rows)
		if err != nil {
			return nil, fmt.Errorf("find patrons by id: %w", err)
		}
		out[p.ID] = p
	}
	return out, rows.Err()
}
