package patrons

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks"
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
	err := tx.QueryRow(`SELECT `+standingColumns+` FROM (SELECT CAST(? AS BIGINT) AS id) p`, db.FormatTime(tx.Now()), patronID).Scan(s.scanDest()...)
	if err != nil {
		return StandingSummary{}, fmt.Errorf("standing of patron %d: %w", patronID, err)
	}
	return s, nil
}

// standingColumns computes a StandingSummary for the patron p; its one
// parameter is now. (Plain ? placeholders, in order: db rewrites them to $n for
// PostgreSQL, and has no form for SQLite's numbered ?NNN.)
const standingColumns = `(SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE patron_id = p.id),
	(SELECT count(*) FROM loans WHERE patron_id = p.id AND returned_at IS NULL),
	(SELECT count(*) FROM loans WHERE patron_id = p.id AND returned_at IS NULL AND due_at < ?),
	(SELECT count(*) FROM holds WHERE patron_id = p.id AND status = 'waiting'),
	(SELECT count(*) FROM holds WHERE patron_id = p.id AND status IN ('queued', 'in_transit', 'waiting'))`

func (s *StandingSummary) scanDest() []any {
	return []any{&s.BalanceCents, &s.Loans, &s.Overdue, &s.HoldsWaiting, &s.HoldsOpen}
}

// FindWithStanding returns a patron and their standing in one statement, for the
// desk, where every scan needs both.
func FindWithStanding(tx *db.Tx, id int64) (*Patron, StandingSummary, error) {
	var s StandingSummary
	p, err := scanPatron(tx.QueryRow(patronColumns+", "+standingColumns+patronFrom+` WHERE p.id = ?`, db.FormatTime(tx.Now()), id), s.scanDest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, s, stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", id)
	} else if err != nil {
		return nil, s, fmt.Errorf("find patron %d: %w", id, err)
	}
	return p, s, nil
}

// What the desk must see about a card when it is scanned (CardAlert.Code).
const (
	AlertCardExpired = "card_expired"
	AlertBlocked     = "blocked"
	AlertFines       = "fines"
	AlertCardLost    = "card_lost"
)

// CardAlert is one thing about a patron's card that staff must see before the
// first item is lent: the desk shows each as a banner, with its next step.
type CardAlert struct {
	Code string
	// Heading names the state ("Card expired"); Message says more (the date,
	// the note, the amount). The desk adds the next step.
	Heading string
	Message string
}

// CardAlerts returns what the desk must see about the patron's card at now (in the
// library's time zone): a card reported lost, an expired card, a block by staff,
// fines over the limit.
// Each refuses a checkout or asks staff to confirm one, so the desk says it when
// the card is scanned rather than at the first item. The message for the desk
// (DeskMessage) has its own banner and is not among them.
func CardAlerts(p *Patron, s StandingSummary, now time.Time, finesLimitCents int64) []CardAlert {
	var out []CardAlert
	if p.CardLost {
		out = append(out, CardAlert{Code: AlertCardLost, Heading: "Card reported lost",
			Message: fmt.Sprintf("Card %s was reported lost: check that the person at the desk is %s before lending.", p.Card, p.Name())})
	}
	if p.Expired(now) {
		out = append(out, CardAlert{Code: AlertCardExpired, Heading: "Card expired",
			Message: fmt.Sprintf("Card %s expired on %s. Nothing can be lent until it is renewed.", p.Card, p.ExpiresOn.Format("2006-01-02"))})
	}
	if p.Blocked {
		out = append(out, CardAlert{Code: AlertBlocked, Heading: "Patron blocked",
			Message: "Blocked by staff: " + p.BlockNote})
	}
	if s.BalanceCents > finesLimitCents {
		out = append(out, CardAlert{Code: AlertFines, Heading: "Fines over the limit",
			Message: fmt.Sprintf("%s owed in fines; the limit is %s.", stacks.FormatMoney(s.BalanceCents), stacks.FormatMoney(finesLimitCents))})
	}
	return out
}
