package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// A batch edit applies one change to the items of a list of barcodes (scanned,
// pasted, or copied from a report or a stocktake), in one transaction: all of
// them or none. Staff see a preview first (each barcode found or not, what
// changes); the batch keeps each item's values before it (item_batch_items), so
// that it can be undone for a day, while its items were not changed since.

// The fields a batch edit may change.
const (
	BatchLocation         = "location"
	BatchItemType         = "item_type"
	BatchHomeBranch       = "home_branch"
	BatchStatus           = "status"
	BatchCallNumberPrefix = "call_number_prefix"
	BatchWithdraw         = "withdraw"
)

// BatchFields are the fields a batch edit may change, in the order the form
// offers them.
func BatchFields() []string {
	return []string{BatchLocation, BatchItemType, BatchHomeBranch, BatchStatus, BatchCallNumberPrefix, BatchWithdraw}
}

// BatchFieldLabel is how staff read a batch field.
func BatchFieldLabel(field string) string {
	switch field {
	case BatchLocation:
		return "Shelving location"
	case BatchItemType:
		return "Item type"
	case BatchHomeBranch:
		return "Home branch"
	case BatchStatus:
		return "Status"
	case BatchCallNumberPrefix:
		return "Call number prefix"
	case BatchWithdraw:
		return "Withdraw"
	}
	return field
}

// BatchUndoWindow is how long a batch may be undone.
const BatchUndoWindow = 24 * time.Hour

// MaxBatchBarcodes is the most barcodes one batch edit takes.
const MaxBatchBarcodes = 20000

// BatchChange is the change a batch edit applies: Field one of BatchFields,
// Value the new value (a location, an item type or branch code, a status, a
// prefix, or the withdrawal reason).
type BatchChange struct {
	Field string
	Value string
}

// batchStatuses are the statuses a batch may set; withdrawing is a change of
// its own, with its reason.
var batchStatuses = []string{StatusAvailable, StatusMissing, StatusLost}

// ParseBarcodes splits pasted or scanned text into barcodes, one a line (or
// separated by spaces, commas or tabs), without blanks or repeats, in order.
func ParseBarcodes(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return r == '\n' || r == '\r' || r == '\t' || r == ',' || r == ';' || r == ' '
	}) {
		if f = strings.TrimSpace(f); f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// BatchLine is one barcode of a batch as the preview shows it.
type BatchLine struct {
	Barcode string
	ItemID  int64
	Title   string
	// Found is false for a barcode no item has.
	Found bool
	// Before and After are the field's value before and after the change, as
	// staff read it; equal when the item already has the value.
	Before, After string
	// Refused says why the item cannot be changed (checked out...); empty if
	// it can.
	Refused string
}

// Changes reports whether the batch changes the item.
func (l BatchLine) Changes() bool { return l.Found && l.Refused == "" && l.Before != l.After }

// BatchPreview is what a batch edit would do.
type BatchPreview struct {
	Change BatchChange
	// ValueLabel is the new value as staff read it.
	ValueLabel string
	Lines      []BatchLine
	// Counts of the lines by outcome.
	Changed, Unchanged, NotFound, Refused int
}

// batchTarget is the change resolved against the database.
type batchTarget struct {
	BatchChange
	id    int64  // the item type's or branch's id
	label string // the value as staff read it
}

func resolveChange(tx *db.Tx, ch BatchChange) (batchTarget, error) {
	ch.Value = strings.TrimSpace(ch.Value)
	t := batchTarget{BatchChange: ch, label: ch.Value}
	switch ch.Field {
	case BatchLocation:
		if !utf8.ValidString(ch.Value) || utf8.RuneCountInString(ch.Value) > maxLocation || hasControl(ch.Value) {
			return t, stacks.FieldErrorf("value", stacks.EINVALID, "Enter a shelving location of at most %d characters on one line, or leave it empty to clear it.", maxLocation)
		}
	case BatchCallNumberPrefix:
		if ch.Value == "" || !utf8.ValidString(ch.Value) || utf8.RuneCountInString(ch.Value) > 10 || hasControl(ch.Value) {
			return t, stacks.FieldErrorf("value", stacks.EINVALID, "Enter the prefix to put before the call numbers, such as REF or J, in at most 10 characters.")
		}
	case BatchItemType, BatchHomeBranch:
		table, what := "item_types", "item type"
		if ch.Field == BatchHomeBranch {
			table, what = "branches", "branch"
		}
		err := tx.QueryRow(`SELECT id, name FROM `+table+` WHERE code = ?`, ch.Value).Scan(&t.id, &t.label)
		if errors.Is(err, sql.ErrNoRows) {
			return t, stacks.FieldErrorf("value", stacks.EINVALID, "There is no %s %q; choose one from the list.", what, ch.Value)
		} else if err != nil {
			return t, fmt.Errorf("look up %s %q: %w", what, ch.Value, err)
		}
	case BatchStatus:
		if !slices.Contains(batchStatuses, ch.Value) {
			return t, stacks.FieldErrorf("value", stacks.EINVALID, "Choose Available, Missing or Lost (to withdraw items, choose Withdraw and give the reason).")
		}
		t.label = StatusLabel(ch.Value)
	case BatchWithdraw:
		reason, err := checkReason(ch.Value)
		if err != nil {
			return t, stacks.FieldErrorf("value", stacks.EINVALID, "%s", stacks.ErrorMessage(err))
		}
		t.Value, t.label = reason, "Withdrawn: "+reason
	default:
		return t, stacks.FieldErrorf("field", stacks.EINVALID, "Choose what to change: shelving location, item type, home branch, status, call number prefix, or withdraw.")
	}
	return t, nil
}

// batchItem is an item of a batch as read for planning it.
type batchItem struct {
	id                     int64
	barcode, title, status string
	location, callNumber   string
	typeCode, typeName     string
	branchCode, branchName string
	onLoan, trapped        bool
}

// readBatchItems reads the items of the barcodes, by barcode.
func readBatchItems(tx *db.Tx, barcodes []string) (map[string]*batchItem, error) {
	out := make(map[string]*batchItem, len(barcodes))
	const chunk = 500
	for start := 0; start < len(barcodes); start += chunk {
		part := barcodes[start:min(start+chunk, len(barcodes))]
		args := make([]any, len(part))
		for i, b := range part {
			args[i] = b
		}
		rows, err := tx.Query(`SELECT i.id, i.barcode, r.title, i.status, i.location, i.call_number, it.code, it.name, hb.code, hb.name,
				EXISTS (SELECT 1 FROM loans l WHERE l.item_id = i.id AND l.returned_at IS NULL),
				EXISTS (SELECT 1 FROM holds h WHERE h.trapped_item_id = i.id AND h.status IN ('in_transit', 'waiting'))
			FROM items i JOIN records r ON r.id = i.record_id JOIN item_types it ON it.id = i.item_type_id JOIN branches hb ON hb.id = i.home_branch_id
			WHERE i.barcode IN (?`+strings.Repeat(", ?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read the batch's items: %w", err)
		}
		for rows.Next() {
			var it batchItem
			if err := rows.Scan(&it.id, &it.barcode, &it.title, &it.status, &it.location, &it.callNumber, &it.typeCode, &it.typeName,
				&it.branchCode, &it.branchName, &it.onLoan, &it.trapped); err != nil {
				rows.Close()
				return nil, err
			}
			out[it.barcode] = &it
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// planBatch works out the preview of a batch: each barcode's outcome.
func planBatch(tx *db.Tx, barcodes []string, ch BatchChange) (BatchPreview, batchTarget, error) {
	p := BatchPreview{Change: ch}
	switch {
	case len(barcodes) == 0:
		return p, batchTarget{}, stacks.FieldErrorf("barcodes", stacks.EINVALID, "Scan or paste the items' barcodes, one a line.")
	case len(barcodes) > MaxBatchBarcodes:
		return p, batchTarget{}, stacks.FieldErrorf("barcodes", stacks.EINVALID, "A batch takes at most %d barcodes; this list has %d. Split it.", MaxBatchBarcodes, len(barcodes))
	}
	t, err := resolveChange(tx, ch)
	if err != nil {
		return p, t, err
	}
	p.Change, p.ValueLabel = t.BatchChange, t.label
	items, err := readBatchItems(tx, barcodes)
	if err != nil {
		return p, t, err
	}
	p.Lines = make([]BatchLine, 0, len(barcodes))
	for _, b := range barcodes {
		it := items[b]
		if it == nil {
			p.Lines = append(p.Lines, BatchLine{Barcode: b})
			p.NotFound++
			continue
		}
		l := BatchLine{Barcode: b, ItemID: it.id, Title: it.title, Found: true}
		held := func() string {
			d := ItemDetails{Item: Item{Barcode: it.barcode, Status: it.status}, OnLoan: it.onLoan, Trapped: it.trapped}
			if err := refuseHeld(&d, "changed"); err != nil {
				return StatusLabel(it.status) + ": circulation holds it; deal with it at the desk first"
			}
			return ""
		}
		switch t.Field {
		case BatchLocation:
			l.Before, l.After = it.location, t.Value
		case BatchCallNumberPrefix:
			l.Before, l.After = it.callNumber, it.callNumber
			if !strings.HasPrefix(it.callNumber, t.Value+" ") && it.callNumber != t.Value {
				l.After = strings.TrimSpace(t.Value + " " + it.callNumber)
			}
			if utf8.RuneCountInString(l.After) > maxCallNumber {
				l.Refused = fmt.Sprintf("the call number would be longer than %d characters", maxCallNumber)
			}
		case BatchItemType:
			l.Before, l.After = it.typeName, t.label
		case BatchHomeBranch:
			l.Before, l.After = it.branchName, t.label
		case BatchStatus:
			l.Before, l.After = StatusLabel(it.status), t.label
			if l.Before != l.After {
				l.Refused = held()
			}
		case BatchWithdraw:
			l.Before, l.After = StatusLabel(it.status), StatusLabel(StatusWithdrawn)
			if l.Before != l.After {
				l.Refused = held()
			}
		}
		switch {
		case l.Refused != "":
			p.Refused++
		case l.Before == l.After:
			p.Unchanged++
		default:
			p.Changed++
		}
		p.Lines = append(p.Lines, l)
	}
	return p, t, nil
}

// PreviewBatch returns what a batch edit of the barcodes would do, without
// doing it.
func (s *Service) PreviewBatch(ctx context.Context, barcodes []string, ch BatchChange) (p BatchPreview, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		p, _, err = planBatch(tx, barcodes, ch)
		return err
	})
	return p, err
}

// BatchResult is what a batch edit did.
type BatchResult struct {
	BatchID int64
	BatchPreview
	// HoldsCancelled counts the holds on withdrawn copies that were cancelled.
	HoldsCancelled int
}

// ApplyBatch applies the change to the items of the barcodes that it changes
// (the preview's Changed lines; barcodes not found, refused or unchanged are
// left out), in one transaction, and records it as one batch, audited once.
// A batch that changes nothing is refused.
func (s *Service) ApplyBatch(ctx context.Context, actor stacks.Actor, barcodes []string, ch BatchChange) (res BatchResult, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		res, err = applyBatch(tx, actor, barcodes, ch)
		return err
	})
	return res, err
}

func applyBatch(tx *db.Tx, actor stacks.Actor, barcodes []string, ch BatchChange) (BatchResult, error) {
	p, t, err := planBatch(tx, barcodes, ch)
	res := BatchResult{BatchPreview: p}
	if err != nil {
		return res, err
	}
	var ids []int64
	for _, l := range p.Lines {
		if l.Changes() {
			ids = append(ids, l.ItemID)
		}
	}
	if len(ids) == 0 {
		return res, stacks.Errorf(stacks.ECONFLICT, "The batch changes no item: every barcode is unknown, refused, or already has the value.")
	}
	now := db.FormatTime(tx.Now())
	var staff sql.NullInt64
	if actor.StaffID != 0 {
		staff = sql.NullInt64{Int64: actor.StaffID, Valid: true}
	}
	res.BatchID, err = tx.InsertID(`INSERT INTO item_batches (at, staff_id, actor, field, value, items) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		now, staff, actor.Name, t.Field, t.Value, len(ids))
	if err != nil {
		return res, fmt.Errorf("record the batch: %w", err)
	}
	const chunk = 500
	for start := 0; start < len(ids); start += chunk {
		in, args := idArgs(ids[start:min(start+chunk, len(ids))])
		if _, err := tx.Exec(`INSERT INTO item_batch_items (batch_id, item_id, home_branch_id, current_branch_id, item_type_id, status,
				call_number, location, withdrawn_at, withdrawn_reason)
			SELECT ?, id, home_branch_id, current_branch_id, item_type_id, status, call_number, location, withdrawn_at, withdrawn_reason
			FROM items WHERE id IN (`+in+`)`, append([]any{res.BatchID}, args...)...); err != nil {
			return res, fmt.Errorf("record the batch's items: %w", err)
		}
		set, setArgs := batchSet(t, now)
		if _, err := tx.Exec(`UPDATE items SET `+set+`, updated_at = ? WHERE id IN (`+in+`)`,
			append(append(setArgs, now), args...)...); err != nil {
			return res, fmt.Errorf("apply the batch: %w", err)
		}
		if t.Field == BatchWithdraw {
			holdIDs, err := tx.IDs(`SELECT id FROM holds WHERE item_id IN (`+in+`) AND status = 'queued' ORDER BY id`, args...)
			if err != nil {
				return res, fmt.Errorf("find holds on the withdrawn copies: %w", err)
			}
			if len(holdIDs) > 0 {
				hin, hargs := idArgs(holdIDs)
				if _, err := tx.Exec(`INSERT INTO item_batch_holds (batch_id, hold_id, priority)
					SELECT ?, id, priority FROM holds WHERE id IN (`+hin+`)`, append([]any{res.BatchID}, hargs...)...); err != nil {
					return res, fmt.Errorf("record the batch's holds: %w", err)
				}
			}
			if err := cancelHolds(tx, actor, holdIDs, withdrawnCopyReason); err != nil {
				return res, err
			}
			res.HoldsCancelled += len(holdIDs)
		}
	}
	return res, tx.Audit(actor, "item.batch", "item_batch", res.BatchID, fmt.Sprintf("%s set to %q on %s (%d unknown, %d refused, %d unchanged)",
		BatchFieldLabel(t.Field), p.ValueLabel, plural(len(ids), "item", "items"), p.NotFound, p.Refused, p.Unchanged))
}

// batchSet is the SET clause that applies change t at now, and its arguments.
func batchSet(t batchTarget, now string) (string, []any) {
	switch t.Field {
	case BatchLocation:
		return `location = ?`, []any{t.Value}
	case BatchCallNumberPrefix:
		return `call_number = trim(CAST(? AS TEXT) || ' ' || call_number)`, []any{t.Value}
	case BatchItemType:
		return `item_type_id = ?`, []any{t.id}
	case BatchHomeBranch:
		// Copies on the shelf move with their home: they are on the new
		// branch's shelves. Others keep where they are.
		return `home_branch_id = ?, current_branch_id = CASE WHEN status = 'available' THEN ? ELSE current_branch_id END`, []any{t.id, t.id}
	case BatchStatus:
		return `status = ?, withdrawn_at = NULL, withdrawn_reason = ''`, []any{t.Value}
	}
	return `status = 'withdrawn', transit_to_id = NULL, withdrawn_at = ?, withdrawn_reason = ?`, []any{now, t.Value}
}

// Batch is a batch edit as the list of recent ones shows it.
type Batch struct {
	ID       int64
	At       time.Time
	Actor    string
	Field    string
	Value    string
	Items    int
	UndoneAt db.NullTime
}

// RecentBatches returns the batch edits of the undo window, newest first.
func (s *Service) RecentBatches(ctx context.Context) (bs []Batch, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT id, at, actor, field, value, items, undone_at FROM item_batches WHERE at >= ? ORDER BY at DESC, id DESC`,
			db.FormatTime(tx.Now().Add(-BatchUndoWindow)))
		if err != nil {
			return fmt.Errorf("list batches: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var b Batch
			var at db.NullTime
			if err := rows.Scan(&b.ID, &at, &b.Actor, &b.Field, &b.Value, &b.Items, &b.UndoneAt); err != nil {
				return err
			}
			b.At = at.Time
			bs = append(bs, b)
		}
		return rows.Err()
	})
	return bs, err
}

// BatchUndo is what undoing a batch did.
type BatchUndo struct {
	// Items counts the items put back as they were.
	Items int
	// HoldsRestored counts the holds a withdrawal cancelled that are queued
	// again, in their places.
	HoldsRestored int
}

// UndoBatch puts the items of batch id back as they were before it. It is
// refused after the undo window, for a batch already undone, and when any of
// its items was changed since (by the desk, a form or another batch): undoing
// would overwrite that change. The holds a withdrawal cancelled (holds asked
// for one of its copies) are queued again where they were, ahead of holds
// placed since.
func (s *Service) UndoBatch(ctx context.Context, actor stacks.Actor, id int64) (u BatchUndo, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		u, err = undoBatch(tx, actor, id)
		return err
	})
	return u, err
}

func undoBatch(tx *db.Tx, actor stacks.Actor, id int64) (BatchUndo, error) {
	var at, field, value string
	var undone sql.NullString
	err := tx.QueryRow(`SELECT at, field, value, undone_at FROM item_batches WHERE id = ?`, id).Scan(&at, &field, &value, &undone)
	if errors.Is(err, sql.ErrNoRows) {
		return BatchUndo{}, stacks.Errorf(stacks.ENOTFOUND, "There is no batch edit %d.", id)
	} else if err != nil {
		return BatchUndo{}, fmt.Errorf("find batch %d: %w", id, err)
	}
	if undone.Valid {
		return BatchUndo{}, stacks.Errorf(stacks.ECONFLICT, "Batch %d was already undone.", id)
	}
	if at < db.FormatTime(tx.Now().Add(-BatchUndoWindow)) {
		return BatchUndo{}, stacks.Errorf(stacks.ECONFLICT, "Batch %d is more than a day old and can no longer be undone. Make a new batch edit to change the items back.", id)
	}
	// An item changed since the batch has another updated_at (or, changed in
	// the same second, another status than the batch left).
	cond, args := `i.updated_at <> ?`, []any{id, at}
	switch field {
	case BatchWithdraw:
		cond += ` OR i.status <> 'withdrawn'`
	case BatchStatus:
		cond, args = cond+` OR i.status <> ?`, append(args, value)
	}
	changed, err := tx.Query(`SELECT i.barcode FROM item_batch_items b JOIN items i ON i.id = b.item_id
		WHERE b.batch_id = ? AND (`+cond+`) ORDER BY i.barcode`, args...)
	if err != nil {
		return BatchUndo{}, fmt.Errorf("check batch %d: %w", id, err)
	}
	var barcodes []string
	for changed.Next() {
		var b string
		if err := changed.Scan(&b); err != nil {
			changed.Close()
			return BatchUndo{}, err
		}
		barcodes = append(barcodes, b)
	}
	changed.Close()
	if err := changed.Err(); err != nil {
		return BatchUndo{}, err
	}
	if len(barcodes) > 0 {
		shown := barcodes[:min(len(barcodes), 10)]
		more := ""
		if len(barcodes) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(barcodes)-len(shown))
		}
		return BatchUndo{}, stacks.Errorf(stacks.ECONFLICT, "Batch %d cannot be undone: items %s%s were changed since. Change them back with a new batch edit.",
			id, strings.Join(shown, ", "), more)
	}
	now := db.FormatTime(tx.Now())
	col := func(c string) string {
		return c + ` = (SELECT b.` + c + ` FROM item_batch_items b WHERE b.batch_id = ?1 AND b.item_id = items.id)`
	}
	r, err := tx.Exec(`UPDATE items SET `+strings.Join([]string{col("home_branch_id"), col("current_branch_id"), col("item_type_id"), col("status"),
		col("call_number"), col("location"), col("withdrawn_at"), col("withdrawn_reason")}, ", ")+`, updated_at = ?2
		WHERE id IN (SELECT item_id FROM item_batch_items WHERE batch_id = ?1)`, id, now)
	if err != nil {
		return BatchUndo{}, fmt.Errorf("undo batch %d: %w", id, err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return BatchUndo{}, err
	}
	u := BatchUndo{Items: int(n)}
	if field == BatchWithdraw {
		if u.HoldsRestored, err = restoreBatchHolds(tx, actor, id, at); err != nil {
			return u, err
		}
	}
	if _, err := tx.Exec(`UPDATE item_batches SET undone_at = ? WHERE id = ?`, now, id); err != nil {
		return u, fmt.Errorf("undo batch %d: %w", id, err)
	}
	detail := fmt.Sprintf("%s of %s put back", BatchFieldLabel(field), plural(u.Items, "item", "items"))
	if u.HoldsRestored > 0 {
		detail += fmt.Sprintf("; %s queued again", plural(u.HoldsRestored, "hold", "holds"))
	}
	return u, tx.Audit(actor, "item.batch_undo", "item_batch", id, detail)
}

// restoreBatchHolds queues again the holds batch id cancelled at its time at
// (those still cancelled by it: a hold the privacy purge removed is gone, one
// cancelled since for another reason stays so), each at the place it had in
// its record's queue, in the order of those places, ahead of holds placed
// since; then numbers each queue from 1 (setQueueOrder).
func restoreBatchHolds(tx *db.Tx, actor stacks.Actor, batchID int64, at string) (int, error) {
	rows, err := tx.Query(`SELECT h.id, h.record_id, b.priority FROM item_batch_holds b JOIN holds h ON h.id = b.hold_id
		WHERE b.batch_id = ? AND h.status = 'cancelled' AND h.closed_at = ? AND h.cancel_reason = ?
		ORDER BY h.record_id, b.priority, h.id`, batchID, at, withdrawnCopyReason)
	if err != nil {
		return 0, fmt.Errorf("find the holds of batch %d: %w", batchID, err)
	}
	type restore struct{ id, priority int64 }
	byRecord := map[int64][]restore{}
	var records, ids []int64
	for rows.Next() {
		var r restore
		var record int64
		if err := rows.Scan(&r.id, &record, &r.priority); err != nil {
			rows.Close()
			return 0, err
		}
		if len(byRecord[record]) == 0 {
			records = append(records, record)
		}
		byRecord[record] = append(byRecord[record], r)
		ids = append(ids, r.id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return 0, err
	}
	for _, record := range records {
		queue, err := tx.IDs(`SELECT id FROM holds WHERE record_id = ? AND status = 'queued' ORDER BY priority, placed_at, id`, record)
		if err != nil {
			return 0, fmt.Errorf("read the hold queue of record %d: %w", record, err)
		}
		for _, r := range byRecord[record] { // by place, so each lands where it was
			queue = slices.Insert(queue, min(int(max(r.priority, 1))-1, len(queue)), r.id)
		}
		if err := setQueueOrder(tx, queue); err != nil {
			return 0, err
		}
	}
	in, args := idArgs(ids)
	if _, err := tx.Exec(`UPDATE holds SET status = 'queued', closed_at = NULL, cancel_reason = '' WHERE id IN (`+in+`)`, args...); err != nil {
		return 0, fmt.Errorf("queue the holds of batch %d again: %w", batchID, err)
	}
	for _, id := range ids {
		if err := tx.Audit(actor, "hold.restored", "hold", id, fmt.Sprintf("batch %d undone", batchID)); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
