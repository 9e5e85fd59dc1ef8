package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Withdrawing keeps an item with its history (its loans, the fines charged on
// them, the reports' counts) but takes it out of the collection: the patrons'
// catalogue, availability, harvests and the labels leave it out, and the desk
// refuses to lend it. Deleting removes an item or a record for good, and is
// allowed only where no history names it: an item that was never lent (the
// ledger names loans, loans name items: the foreign keys of both engines keep
// what a patron owes), a record whose copies were never lent.

// maxWithdrawReason is the longest withdrawal reason, in characters.
const maxWithdrawReason = 200

// checkReason validates a one-line reason (a withdrawal's, a deletion's).
func checkReason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return "", stacks.FieldErrorf("reason", stacks.EINVALID, "Say why the item is withdrawn (weeded, damaged, lost and paid for...).")
	case !utf8.ValidString(reason) || utf8.RuneCountInString(reason) > maxWithdrawReason || strings.ContainsFunc(reason, unicode.IsControl):
		return "", stacks.FieldErrorf("reason", stacks.EINVALID, "Give the reason on one line, in at most %d characters.", maxWithdrawReason)
	}
	return reason, nil
}

// WithdrawResult is what withdrawing an item did besides.
type WithdrawResult struct {
	Barcode string
	// HoldsCancelled counts the open holds on this very copy (item-level holds)
	// that were cancelled: the desk tells their patrons.
	HoldsCancelled int
}

// WithdrawItem withdraws item itemID for reason. An item that circulation holds
// (checked out, on the hold shelf, in transit) is refused, with what to do
// first. Holds placed on this very copy are cancelled.
func (s *Service) WithdrawItem(ctx context.Context, actor stacks.Actor, itemID int64, reason string) (res WithdrawResult, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		res, err = withdrawItem(tx, actor, itemID, reason)
		return err
	})
	return res, err
}

func withdrawItem(tx *db.Tx, actor stacks.Actor, itemID int64, reason string) (WithdrawResult, error) {
	reason, err := checkReason(reason)
	if err != nil {
		return WithdrawResult{}, err
	}
	d, err := FindItemDetails(tx, itemID)
	if err != nil {
		return WithdrawResult{}, err
	}
	if d.Status == StatusWithdrawn {
		return WithdrawResult{}, stacks.Errorf(stacks.ECONFLICT, "Item %s is already withdrawn.", d.Barcode)
	}
	if err := refuseHeld(d, "withdrawn"); err != nil {
		return WithdrawResult{}, err
	}
	res := WithdrawResult{Barcode: d.Barcode}
	if res.HoldsCancelled, err = cancelItemHolds(tx, actor, itemID, withdrawnCopyReason); err != nil {
		return res, err
	}
	now := db.FormatTime(tx.Now())
	if _, err := tx.Exec(`UPDATE items SET status = ?, transit_to_id = NULL, withdrawn_at = ?, withdrawn_reason = ?, updated_at = ? WHERE id = ?`,
		StatusWithdrawn, now, reason, now, itemID); err != nil {
		return res, fmt.Errorf("withdraw item %d: %w", itemID, err)
	}
	return res, tx.Audit(actor, "item.withdraw", "item", itemID, fmt.Sprintf("%s (was %s): %s", d.Barcode, d.Status, reason))
}

// refuseHeld refuses to change an item that circulation holds, saying what to
// do first; what is "withdrawn" or "deleted".
func refuseHeld(d *ItemDetails, what string) error {
	switch {
	case d.OnLoan || d.Status == StatusOnLoan:
		return stacks.Errorf(stacks.ECONFLICT, "Item %s is checked out, so it cannot be %s. Check it in first (or, if the patron lost it, mark the loan lost so that the patron is charged), then withdraw it.",
			d.Barcode, what)
	case d.Trapped || d.Status == StatusOnHoldShelf:
		return stacks.Errorf(stacks.ECONFLICT, "Item %s is set aside for a hold, so it cannot be %s. Cancel the hold or check the item out to the patron first.", d.Barcode, what)
	case d.Status == StatusInTransit:
		return stacks.Errorf(stacks.ECONFLICT, "Item %s is in transit, so it cannot be %s. Check it in when it arrives first.", d.Barcode, what)
	}
	return nil
}

// DeleteItemResult is what deleting an item did.
type DeleteItemResult struct {
	Barcode  string
	RecordID int64
	// HoldsCancelled counts the open holds on this very copy that were cancelled.
	HoldsCancelled int
}

// DeleteItem deletes item itemID, which must never have been lent (no loan, even
// returned, names it): a copy added by mistake, or a duplicate barcode. An item
// that was lent is refused: withdraw it instead.
func (s *Service) DeleteItem(ctx context.Context, actor stacks.Actor, itemID int64) (res DeleteItemResult, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		d, err := FindItemDetails(tx, itemID)
		if err != nil {
			return err
		}
		if err := refuseHeld(d, "deleted"); err != nil {
			return err
		}
		if err := refuseLent(tx, []int64{itemID}); err != nil {
			return err
		}
		res = DeleteItemResult{Barcode: d.Barcode, RecordID: d.RecordID}
		if res.HoldsCancelled, err = cancelItemHolds(tx, actor, itemID, "The copy asked for was removed from the catalogue."); err != nil {
			return err
		}
		if err := deleteItemRows(tx, []int64{itemID}); err != nil {
			return err
		}
		return tx.Audit(actor, "item.delete", "item", itemID, fmt.Sprintf("%s of record %d (%s)", d.Barcode, d.RecordID, d.Title))
	})
	return res, err
}

// refuseLent refuses to delete items of which any was ever lent.
func refuseLent(tx *db.Tx, itemIDs []int64) error {
	if len(itemIDs) == 0 {
		return nil
	}
	in, args := idArgs(itemIDs)
	rows, err := tx.Query(`SELECT i.barcode, count(*) FROM loans l JOIN items i ON i.id = l.item_id
		WHERE l.item_id IN (`+in+`) GROUP BY i.barcode ORDER BY i.barcode`, args...)
	if err != nil {
		return fmt.Errorf("find loans of items: %w", err)
	}
	defer rows.Close()
	var lent []string
	for rows.Next() {
		var barcode string
		var n int
		if err := rows.Scan(&barcode, &n); err != nil {
			return err
		}
		lent = append(lent, fmt.Sprintf("%s (%s)", barcode, plural(n, "loan", "loans")))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	switch len(lent) {
	case 0:
		return nil
	case 1:
		return stacks.Errorf(stacks.ECONFLICT, "Item %s has been lent, so it cannot be deleted: its loan history, and any fine charged on it, names it. Withdraw it instead.", lent[0])
	}
	return stacks.Errorf(stacks.ECONFLICT, "Items %s have been lent, so they cannot be deleted: their loan history, and any fine charged on it, names them. Withdraw them instead.",
		strings.Join(lent, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// deleteItemRows deletes items that were never lent, with what names them
// without being history of a patron: their desk check-ins (none has a loan),
// their batch edits; stocktake scans and holds keep their rows without the
// item (the scan keeps the barcode; a hold asked for the copy becomes a hold
// on the title). The caller has cancelled or moved the open holds on them, and
// refused items that a hold has trapped.
func deleteItemRows(tx *db.Tx, itemIDs []int64) error {
	if len(itemIDs) == 0 {
		return nil
	}
	in, args := idArgs(itemIDs)
	for _, q := range []string{
		`DELETE FROM checkins WHERE item_id IN (` + in + `)`,
		`DELETE FROM item_batch_items WHERE item_id IN (` + in + `)`,
		`UPDATE stocktake_scans SET item_id = NULL WHERE item_id IN (` + in + `)`,
		`UPDATE holds SET item_id = NULL WHERE item_id IN (` + in + `)`,
		`UPDATE holds SET trapped_item_id = NULL WHERE trapped_item_id IN (` + in + `) AND status NOT IN ('in_transit', 'waiting')`,
		`DELETE FROM items WHERE id IN (` + in + `)`,
	} {
		if _, err := tx.Exec(q, args...); err != nil {
			return fmt.Errorf("delete items: %w", err)
		}
	}
	return nil
}

// withdrawnCopyReason is the cancellation reason of a hold whose copy was
// withdrawn.
const withdrawnCopyReason = "The copy asked for was withdrawn from the collection."

// cancelItemHolds cancels the open holds asked for item itemID (item-level
// holds) that are still queued, renumbering their queues, and returns how many.
func cancelItemHolds(tx *db.Tx, actor stacks.Actor, itemID int64, reason string) (int, error) {
	ids, err := tx.IDs(`SELECT id FROM holds WHERE item_id = ? AND status = 'queued' ORDER BY id`, itemID)
	if err != nil {
		return 0, fmt.Errorf("find holds on item %d: %w", itemID, err)
	}
	return len(ids), cancelHolds(tx, actor, ids, reason)
}

// cancelHolds cancels the queued holds ids, with reason, and renumbers the
// queues they leave.
func cancelHolds(tx *db.Tx, actor stacks.Actor, ids []int64, reason string) error {
	if len(ids) == 0 {
		return nil
	}
	in, args := idArgs(ids)
	records, err := tx.IDs(`SELECT DISTINCT record_id FROM holds WHERE id IN (`+in+`) ORDER BY record_id`, args...)
	if err != nil {
		return fmt.Errorf("cancel holds: %w", err)
	}
	if _, err := tx.Exec(`UPDATE holds SET status = 'cancelled', closed_at = ?, cancel_reason = ?, priority = 0 WHERE id IN (`+in+`)`,
		append([]any{db.FormatTime(tx.Now()), reason}, args...)...); err != nil {
		return fmt.Errorf("cancel holds: %w", err)
	}
	for _, id := range ids {
		if err := tx.Audit(actor, "hold.cancelled", "hold", id, reason); err != nil {
			return err
		}
	}
	for _, r := range records {
		if err := renumberQueue(tx, r); err != nil {
			return err
		}
	}
	return nil
}

// renumberQueue numbers the queued holds of record recordID 1 to n, in the
// order of their positions, then of when they were placed: a queue with a gap,
// or two queues joined (a merge), becomes one queue in that order.
func renumberQueue(tx *db.Tx, recordID int64) error {
	ids, err := tx.IDs(`SELECT id FROM holds WHERE record_id = ? AND status = 'queued' ORDER BY priority, placed_at, id`, recordID)
	if err != nil {
		return fmt.Errorf("renumber the hold queue of record %d: %w", recordID, err)
	}
	return setQueueOrder(tx, ids)
}

// setQueueOrder gives the queued holds ids the positions 1 to n in that order.
func setQueueOrder(tx *db.Tx, ids []int64) error {
	for i, id := range ids {
		if _, err := tx.Exec(`UPDATE holds SET priority = ? WHERE id = ? AND priority <> ?`, i+1, id, i+1); err != nil {
			return fmt.Errorf("renumber hold %d: %w", id, err)
		}
	}
	return nil
}

// DeleteRecordResult is what deleting a record did: what the desk is told.
type DeleteRecordResult struct {
	Title         string
	CopiesDeleted int
	// HoldsCancelled counts the open holds cancelled; HoldsMoved those moved to
	// record MovedTo instead.
	HoldsCancelled int
	HoldsMoved     int
	MovedTo        int64
}

// DeleteRecord deletes record recordID with its copies. It is refused while any
// copy is checked out, on the hold shelf or in transit, and when any copy was
// ever lent (its loan history names it: withdraw the copies instead, or merge
// the record into another). The record's open holds are moved to record
// moveHoldsTo, kept in the order they were placed among that record's own,
// or, when moveHoldsTo is 0, cancelled. Its closed holds go with the open ones,
// or are deleted with it. OAI-PMH reports the record deleted (deleted_records).
func (s *Service) DeleteRecord(ctx context.Context, actor stacks.Actor, recordID, moveHoldsTo int64) (res DeleteRecordResult, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		res, err = deleteRecord(tx, actor, recordID, moveHoldsTo)
		return err
	})
	return res, err
}

// RecordDeletion is what deleting a record would do, for the confirmation page.
type RecordDeletion struct {
	Record *Record
	Copies []CopyStatus
	// OpenHolds counts the record's open holds, which are cancelled or moved.
	OpenHolds int
	// Refused is why the record cannot be deleted now; nil if it can.
	Refused error
}

// RecordDeletion reads what deleting record id would do, without doing it.
func (s *Service) RecordDeletion(ctx context.Context, id int64) (rd RecordDeletion, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		if rd.Record, rd.Copies, err = FindRecord(tx, id); err != nil {
			return err
		}
		if err := tx.QueryRow(`SELECT count(*) FROM holds WHERE record_id = ? AND status IN ('queued', 'in_transit', 'waiting')`, id).Scan(&rd.OpenHolds); err != nil {
			return fmt.Errorf("count holds of record %d: %w", id, err)
		}
		_, rd.Refused, err = deletableCopies(tx, id)
		return err
	})
	return rd, err
}

// deletableCopies returns the ids of record recordID's copies, and why they
// cannot all be deleted (nil if they can).
func deletableCopies(tx *db.Tx, recordID int64) ([]int64, error, error) {
	rows, err := tx.Query(`SELECT i.id, i.barcode, i.status,
			EXISTS (SELECT 1 FROM loans l WHERE l.item_id = i.id AND l.returned_at IS NULL),
			EXISTS (SELECT 1 FROM holds h WHERE h.trapped_item_id = i.id AND h.status IN ('in_transit', 'waiting'))
		FROM items i WHERE i.record_id = ? ORDER BY i.barcode`, recordID)
	if err != nil {
		return nil, nil, fmt.Errorf("find copies of record %d: %w", recordID, err)
	}
	defer rows.Close()
	var ids []int64
	var held []string
	for rows.Next() {
		var d ItemDetails
		if err := rows.Scan(&d.ID, &d.Barcode, &d.Status, &d.OnLoan, &d.Trapped); err != nil {
			return nil, nil, err
		}
		ids = append(ids, d.ID)
		if refuseHeld(&d, "deleted") != nil {
			held = append(held, d.Barcode+" ("+StatusLabel(d.Status)+")")
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(held) > 0 {
		return ids, stacks.Errorf(stacks.ECONFLICT, "The record cannot be deleted while circulation holds its copies %s: check them in, or deal with their holds at the desk, first.",
			strings.Join(held, ", ")), nil
	}
	if refused := refuseLent(tx, ids); refused != nil {
		var e *stacks.Error
		if !errors.As(refused, &e) {
			return nil, nil, refused
		}
		return ids, stacks.Errorf(stacks.ECONFLICT, "%s The record stays for their history; merge it into another record to move them there.", e.Message), nil
	}
	return ids, nil, nil
}

func deleteRecord(tx *db.Tx, actor stacks.Actor, recordID, moveHoldsTo int64) (DeleteRecordResult, error) {
	var res DeleteRecordResult
	err := tx.QueryRow(`SELECT title FROM records WHERE id = ?`, recordID).Scan(&res.Title)
	if errors.Is(err, sql.ErrNoRows) {
		return res, errNoRecord(recordID)
	} else if err != nil {
		return res, fmt.Errorf("find record %d: %w", recordID, err)
	}
	copies, refused, err := deletableCopies(tx, recordID)
	if err != nil {
		return res, err
	}
	if refused != nil {
		return res, refused
	}
	if moveHoldsTo == recordID {
		return res, stacks.FieldErrorf("move_holds_to", stacks.EINVALID, "Name another record to move the holds to: this one is being deleted.")
	}
	open, err := tx.IDs(`SELECT id FROM holds WHERE record_id = ? AND status = 'queued' ORDER BY priority, id`, recordID)
	if err != nil {
		return res, fmt.Errorf("find holds of record %d: %w", recordID, err)
	}
	if moveHoldsTo != 0 {
		var title string
		err := tx.QueryRow(`SELECT title FROM records WHERE id = ?`, moveHoldsTo).Scan(&title)
		if errors.Is(err, sql.ErrNoRows) {
			return res, stacks.FieldErrorf("move_holds_to", stacks.ENOTFOUND, "There is no record %d to move the holds to. Check the record number.", moveHoldsTo)
		} else if err != nil {
			return res, fmt.Errorf("find record %d: %w", moveHoldsTo, err)
		}
		if err := moveHolds(tx, recordID, moveHoldsTo); err != nil {
			return res, err
		}
		res.HoldsMoved, res.MovedTo = len(open), moveHoldsTo
		for _, id := range open {
			if err := tx.Audit(actor, "hold.move", "hold", id, fmt.Sprintf("from record %d (deleted) to record %d", recordID, moveHoldsTo)); err != nil {
				return res, err
			}
		}
	} else {
		if err := cancelHolds(tx, actor, open, "The title was removed from the catalogue."); err != nil {
			return res, err
		}
		res.HoldsCancelled = len(open)
	}
	if err := deleteItemRows(tx, copies); err != nil {
		return res, err
	}
	if res.MovedTo == 0 {
		// The record's closed holds go with it: nothing else names them once
		// its copies are gone, but a check-in elsewhere that expired one.
		for _, q := range []string{
			`UPDATE checkins SET hold_id = NULL WHERE hold_id IN (SELECT id FROM holds WHERE record_id = ?)`,
			`UPDATE checkins SET expired_hold_id = NULL WHERE expired_hold_id IN (SELECT id FROM holds WHERE record_id = ?)`,
			`DELETE FROM holds WHERE record_id = ?`,
		} {
			if _, err := tx.Exec(q, recordID); err != nil {
				return res, fmt.Errorf("delete holds of record %d: %w", recordID, err)
			}
		}
	}
	res.CopiesDeleted = len(copies)
	// A record merged into this one was deleted then: its link now says so.
	if _, err := tx.Exec(`DELETE FROM record_redirects WHERE to_id = ?`, recordID); err != nil {
		return res, fmt.Errorf("delete redirects to record %d: %w", recordID, err)
	}
	if _, err := tx.Exec(`DELETE FROM records WHERE id = ?`, recordID); err != nil {
		return res, fmt.Errorf("delete record %d: %w", recordID, err)
	}
	detail := fmt.Sprintf("%q with %s; ", res.Title, plural(res.CopiesDeleted, "copy", "copies"))
	if res.MovedTo != 0 {
		detail += fmt.Sprintf("%s moved to record %d", plural(res.HoldsMoved, "open hold", "open holds"), res.MovedTo)
	} else {
		detail += plural(res.HoldsCancelled, "open hold", "open holds") + " cancelled"
	}
	return res, tx.Audit(actor, "record.delete", "record", recordID, detail)
}

// moveHolds moves every hold of record from (open and closed) to record to;
// the queued ones join to's queue in the order they were placed (a hold asked
// for a copy keeps its copy: copies move with a merge). Trapped holds keep
// their copies.
func moveHolds(tx *db.Tx, from, to int64) error {
	if _, err := tx.Exec(`UPDATE holds SET record_id = ? WHERE record_id = ?`, to, from); err != nil {
		return fmt.Errorf("move holds of record %d to record %d: %w", from, to, err)
	}
	ids, err := tx.IDs(`SELECT id FROM holds WHERE record_id = ? AND status = 'queued' ORDER BY placed_at, id`, to)
	if err != nil {
		return fmt.Errorf("renumber the hold queue of record %d: %w", to, err)
	}
	// Two holds may share a position during the renumbering: nothing unique
	// constrains it.
	return setQueueOrder(tx, ids)
}
