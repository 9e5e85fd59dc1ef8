package patrons

import (
	"fmt"

	"github.com/stacks-ils/stacks/db"
)

// StandingSummary is a patron's position at the desk: what they owe and what they
// have out and waiting.
type StandingSummary struct {
	// BalanceCents is what the patron owes (the ledger's sum).
	BalanceCents int64
	// Loans counts current loans; Overdue, those past their due time.
	Loans   int
	Overdue int
	// HoldsWaiting counts holds on the hold shelf for pickup; HoldsOpen, every hold
	// not yet filled or closed (queued, in transit, waiting).
	HoldsWaiting int
	HoldsOpen    int
}

// Standing returns the patron's standing in one statement, for the patron header of
// the desk pages. Overdue is judged at the transaction's clock.
func Standing(tx *db.Tx, patronID int64) (StandingSummary, error) {
	var s StandingSummary
	err := tx.QueryRow(`SELECT
		(SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE patron_id = ?1),
		(SELECT count(*) FROM loans WHERE patron_id = ?1 AND returned_at IS NULL),
		(SELECT count(*) FROM loans WHERE patron_id = ?1 AND returned_at IS NULL AND due_at < ?2),
		(SELECT count(*) FROM holds WHERE patron_id = ?1 AND status = 'waiting'),
		(SELECT count(*) FROM holds WHERE patron_id = ?1 AND status IN ('queued', 'in_transit', 'waiting'))`,
		patronID, db.FormatTime(tx.Now())).Scan(&s.BalanceCents, &s.Loans, &s.Overdue, &s.HoldsWaiting, &s.HoldsOpen)
	if err != nil {
		return StandingSummary{}, fmt.Errorf("standing of patron %d: %w", patronID, err)
	}
	return s, nil
}
