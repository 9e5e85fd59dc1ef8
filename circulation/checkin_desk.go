package circulation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// checkinsToAcknowledge returns the checkins of a desk's list that need action
// and that staff have not acknowledged, newest first, in one query. A copy
// checked in again later in the same list is represented by its latest checkin
// only: what that one says is what the desk must do now.
func checkinsToAcknowledge(tx *db.Tx, batch string) ([]CheckinResult, error) {
	return queryCheckins(tx, "checkins to acknowledge", `WHERE c.batch = ? AND c.batch <> '' AND c.needs_ack = 1 AND c.acked_at IS NULL
			AND NOT EXISTS (SELECT 1 FROM checkins n WHERE n.item_id = c.item_id AND n.batch = c.batch AND n.id > c.id)
		ORDER BY c.id DESC`, batch)
}

// noPatronMessageWaiting says whether none of the patron's returns on the list
// waits to be acknowledged: one that waits shows their message already.
func noPatronMessageWaiting(tx *db.Tx, batch string, patronID int64) (bool, error) {
	var n int64
	err := tx.QueryRow(`SELECT count(*) FROM checkins c JOIN loans l ON l.id = c.loan_id
		WHERE c.batch = ? AND c.batch <> '' AND c.needs_ack = 1 AND c.acked_at IS NULL AND l.patron_id = ?`, batch, patronID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("messages waiting for patron %d: %w", patronID, err)
	}
	return n == 0, nil
}

// AcknowledgeCheckin records that staff have dealt with what checkin id of the
// desk's list asked of them (the copy is on the hold shelf, in the transit box,
// off the shelf): the Check in page stops showing it. Acknowledging it twice (a
// second click, another tab) is not an error; a checkin of another desk's list is
// not found.
func (s *Service) AcknowledgeCheckin(ctx context.Context, actor stacks.Actor, batch string, id int64) error {
	if err := requireActor(actor); err != nil {
		return err
	}
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		res, err := tx.Exec(`UPDATE checkins SET acked_at = ?, acked_by = ?
			WHERE id = ? AND batch = ? AND batch <> '' AND needs_ack = 1 AND acked_at IS NULL`,
			db.FormatTime(tx.Now()), actor.Name, id, batch)
		if err != nil {
			return fmt.Errorf("acknowledge checkin %d: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		// Nothing changed: already acknowledged, or never needed it (fine), or
		// not on this list.
		err = tx.QueryRow(`SELECT 1 FROM checkins WHERE id = ? AND batch = ? AND batch <> ''`, id, batch).Scan(new(int))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return stacks.Errorf(stacks.ENOTFOUND, "That message is not on this desk's Check in list (it may have been cleared): nothing to acknowledge.")
		case err != nil:
			return fmt.Errorf("acknowledge checkin %d: %w", id, err)
		}
		return nil
	})
}

// AcknowledgeAll acknowledges every message of the desk's list: staff cleared
// the list, the messages with it.
func (s *Service) AcknowledgeAll(ctx context.Context, actor stacks.Actor, batch string) error {
	if err := requireActor(actor); err != nil || batch == "" {
		return err
	}
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE checkins SET acked_at = ?, acked_by = ?
			WHERE batch = ? AND batch <> '' AND needs_ack = 1 AND acked_at IS NULL`, db.FormatTime(tx.Now()), actor.Name, batch)
		if err != nil {
			return fmt.Errorf("acknowledge the checkin list: %w", err)
		}
		return nil
	})
}

// ReceiptPatron is a patron who returned items on a desk's list.
type ReceiptPatron struct {
	ID   int64
	Name string
	Card string
}

// CheckinReceipt is the receipt of one patron's returns on a desk's list.
type CheckinReceipt struct {
	// Patron is whose returns these are: the one asked for, else the borrower of
	// the list's latest return. It is zero when nobody's loan was returned.
	Patron ReceiptPatron
	// Returns are the patron's returns on the list, newest first.
	Returns []CheckinResult
	// Others are the other patrons with returns on the list, latest first, for
	// their own receipts.
	Others []ReceiptPatron
}

// CheckinReceipt returns the receipt of patronID's returns on the desk's list
// batch; patronID 0 asks for the patron of the list's latest return. A receipt
// is one patron's, as the slip handed over the desk must be: the list mixes the
// returns of everyone who came by. It reads at most limit returns.
func (s *Service) CheckinReceipt(ctx context.Context, batch string, patronID int64, limit int) (CheckinReceipt, error) {
	var out CheckinReceipt
	if batch == "" {
		return out, nil
	}
	err := s.DB.Read(ctx, func(tx *db.Tx) error {
		out = CheckinReceipt{}
		ps, err := receiptPatrons(tx, batch)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if out.Patron.ID == 0 && (patronID == 0 || p.ID == patronID) {
				out.Patron = p
			} else {
				out.Others = append(out.Others, p)
			}
		}
		if out.Patron.ID == 0 {
			if patronID != 0 {
				return stacks.Errorf(stacks.ENOTFOUND, "Patron %d returned nothing on this desk's Check in list: there is no receipt to print for them.", patronID)
			}
			return nil
		}
		out.Returns, err = queryCheckins(tx, "checkin receipt", `WHERE c.batch = ? AND c.batch <> '' AND l.patron_id = ?
			ORDER BY c.id DESC LIMIT ?`, batch, out.Patron.ID, limit)
		return err
	})
	return out, err
}

// receiptPatrons lists the patrons whose loans were returned on the list, the
// latest return first.
func receiptPatrons(tx *db.Tx, batch string) ([]ReceiptPatron, error) {
	rows, err := tx.Query(`SELECT p.id, p.first_name || ' ' || p.surname, p.card
		FROM checkins c
		JOIN loans l ON l.id = c.loan_id
		JOIN patrons p ON p.id = l.patron_id
		WHERE c.batch = ? AND c.batch <> ''
		GROUP BY p.id, p.first_name, p.surname, p.card
		ORDER BY max(c.id) DESC`, batch)
	if err != nil {
		return nil, fmt.Errorf("patrons of the checkin list: %w", err)
	}
	defer rows.Close()
	var out []ReceiptPatron
	for rows.Next() {
		var p ReceiptPatron
		if err := rows.Scan(&p.ID, &p.Name, &p.Card); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
