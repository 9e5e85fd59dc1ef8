package holds

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// maxReason bounds a cancelled hold's reason, as the form's field does.
const maxReason = 500

// Hold is an open hold as staff see it in a queue or on the hold shelf.
type Hold struct {
	ID               int64
	RecordID         int64
	Title            string
	Author           string
	ItemID           int64  // item-level hold
	ItemBarcode      string // of the item-level hold
	PatronID         int64
	PatronName       string
	PatronCard       string
	PickupBranchID   int64
	PickupBranchName string
	PlacedAt         time.Time
	// Priority is the position in the queue (1 first) for queued holds, 0 once trapped.
	Priority       int
	Status         string
	SuspendedUntil string // YYYY-MM-DD, "" when active
	TrappedItemID  int64
	TrappedBarcode string
	CallNumber     string
	WaitingSince   time.Time
	PickupBy       time.Time
}

// Suspended reports whether the hold is suspended on day (YYYY-MM-DD).
func (h Hold) Suspended(day string) bool { return h.SuspendedUntil != "" && h.SuspendedUntil > day }

// StatusLabel is how staff read a hold's status.
func StatusLabel(status string) string {
	switch status {
	case StatusQueued:
		return "In queue"
	case StatusInTransit:
		return "In transit to pickup"
	case StatusWaiting:
		return "Waiting for pickup"
	case StatusFulfilled:
		return "Collected"
	case StatusCancelled:
		return "Cancelled"
	case StatusExpired:
		return "Expired"
	}
	return status
}

const holdColumns = `h.id, h.record_id, r.title, r.author, coalesce(h.item_id, 0), coalesce(hi.barcode, ''),
	h.patron_id, p.first_name || ' ' || p.surname, p.card, h.pickup_branch_id, b.name, h.placed_at, h.priority, h.status,
	coalesce(h.suspended_until, ''), coalesce(h.trapped_item_id, 0), coalesce(ti.barcode, ''), coalesce(ti.call_number, ''),
	h.waiting_since, h.pickup_by`

const holdFrom = ` FROM holds h
	JOIN records r ON r.id = h.record_id
	JOIN patrons p ON p.id = h.patron_id
	JOIN branches b ON b.id = h.pickup_branch_id
	LEFT JOIN items hi ON hi.id = h.item_id
	LEFT JOIN items ti ON ti.id = h.trapped_item_id`

func scanHolds(rows *sql.Rows) ([]Hold, error) {
	defer rows.Close()
	var out []Hold
	for rows.Next() {
		var h Hold
		var placed db.Time
		var waiting, pickupBy db.NullTime
		if err := rows.Scan(&h.ID, &h.RecordID, &h.Title, &h.Author, &h.ItemID, &h.ItemBarcode, &h.PatronID, &h.PatronName,
			&h.PatronCard, &h.PickupBranchID, &h.PickupBranchName, &placed, &h.Priority, &h.Status, &h.SuspendedUntil,
			&h.TrappedItemID, &h.TrappedBarcode, &h.CallNumber, &waiting, &pickupBy); err != nil {
			return nil, err
		}
		h.PlacedAt, h.WaitingSince, h.PickupBy = placed.Time, waiting.Time, pickupBy.Time
		out = append(out, h)
	}
	return out, rows.Err()
}

// RecordQueue returns a record's open holds: trapped ones first, then the queue in
// order.
func RecordQueue(tx *db.Tx, recordID int64) ([]Hold, error) {
	rows, err := tx.Query(`SELECT `+holdColumns+holdFrom+`
		WHERE h.record_id = ? AND h.status IN ('queued', 'in_transit', 'waiting')
		ORDER BY h.priority, h.id`, recordID)
	if err != nil {
		return nil, fmt.Errorf("hold queue: %w", err)
	}
	return scanHolds(rows)
}

// PatronHolds returns a patron's open holds, with their positions.
func PatronHolds(tx *db.Tx, patronID int64) ([]Hold, error) {
	rows, err := tx.Query(`SELECT `+holdColumns+holdFrom+`
		WHERE h.patron_id = ? AND h.status IN ('queued', 'in_transit', 'waiting')
		ORDER BY h.status = 'queued', h.placed_at, h.id`, patronID)
	if err != nil {
		return nil, fmt.Errorf("patron holds: %w", err)
	}
	return scanHolds(rows)
}

// FindHold returns one hold, open or not.
func FindHold(tx *db.Tx, id int64) (Hold, error) {
	rows, err := tx.Query(`SELECT `+holdColumns+holdFrom+` WHERE h.id = ?`, id)
	if err != nil {
		return Hold{}, fmt.Errorf("find hold: %w", err)
	}
	hs, err := scanHolds(rows)
	if err != nil {
		return Hold{}, err
	}
	if len(hs) == 0 {
		return Hold{}, stacks.Errorf(stacks.ENOTFOUND, "There is no hold %d.", id)
	}
	return hs[0], nil
}

// openQueued returns a queued hold's record and priority, or an error saying why it
// cannot be moved.
func openQueued(tx *db.Tx, holdID int64) (recordID int64, priority int, err error) {
	var status string
	err = tx.QueryRow(`SELECT record_id, priority, status FROM holds WHERE id = ?`, holdID).Scan(&recordID, &priority, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, stacks.Errorf(stacks.ENOTFOUND, "There is no hold %d.", holdID)
	} else if err != nil {
		return 0, 0, fmt.Errorf("find hold %d: %w", holdID, err)
	}
	if status != StatusQueued {
		return 0, 0, stacks.Errorf(stacks.ECONFLICT, "This hold is %s, so its place in the queue cannot change.", StatusLabel(status))
	}
	return recordID, priority, nil
}

// Move puts a queued hold at position to (1 first) in its record's queue; the holds
// between shift by one.
func Move(tx *db.Tx, actor stacks.Actor, holdID int64, to int) error {
	recordID, from, err := openQueued(tx, holdID)
	if err != nil {
		return err
	}
	var n int
	if err := tx.QueryRow(`SELECT count(*) FROM holds WHERE record_id = ? AND status = 'queued'`, recordID).Scan(&n); err != nil {
		return fmt.Errorf("queue length: %w", err)
	}
	to = max(1, min(to, n))
	if to == from {
		return nil
	}
	if to < from {
		_, err = tx.Exec(`UPDATE holds SET priority = priority + 1 WHERE record_id = ? AND status = 'queued' AND priority >= ? AND priority < ?`, recordID, to, from)
	} else {
		_, err = tx.Exec(`UPDATE holds SET priority = priority - 1 WHERE record_id = ? AND status = 'queued' AND priority > ? AND priority <= ?`, recordID, from, to)
	}
	if err != nil {
		return fmt.Errorf("reorder queue: %w", err)
	}
	if _, err := tx.Exec(`UPDATE holds SET priority = ? WHERE id = ?`, to, holdID); err != nil {
		return fmt.Errorf("reorder queue: %w", err)
	}
	return tx.Audit(actor, "hold.move", "hold", holdID, fmt.Sprintf("position %d to %d", from, to))
}

// Suspend keeps a queued hold in its place but skips it until the day until
// (YYYY-MM-DD, after today). today is read as a date in its own location: pass
// the time in the library's time zone.
func Suspend(tx *db.Tx, actor stacks.Actor, holdID int64, until string, today time.Time) error {
	if _, err := time.Parse(db.DayFormat, until); err != nil {
		return stacks.FieldErrorf("until", stacks.EINVALID, "Give the date the hold should resume, as YYYY-MM-DD.")
	}
	if until <= today.Format(db.DayFormat) {
		return stacks.FieldErrorf("until", stacks.EINVALID, "The resume date must be after today.")
	}
	if _, _, err := openQueued(tx, holdID); err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE holds SET suspended_until = ? WHERE id = ?`, until, holdID); err != nil {
		return fmt.Errorf("suspend hold: %w", err)
	}
	return tx.Audit(actor, "hold.suspend", "hold", holdID, "until "+until)
}

// Resume makes a suspended hold active again.
func Resume(tx *db.Tx, actor stacks.Actor, holdID int64) error {
	if _, _, err := openQueued(tx, holdID); err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE holds SET suspended_until = NULL WHERE id = ?`, holdID); err != nil {
		return fmt.Errorf("resume hold: %w", err)
	}
	return tx.Audit(actor, "hold.resume", "hold", holdID, "")
}

// Close ends an open hold as cancelled (with a reason) or expired, and closes the
// gap in its queue. It returns the item that was set aside for it, if any, which the
// caller must put back into circulation (the next hold, or the shelf).
func Close(tx *db.Tx, actor stacks.Actor, holdID int64, status, reason string) (freedItemID int64, err error) {
	if status != StatusCancelled && status != StatusExpired {
		return 0, fmt.Errorf("close hold: bad status %q", status)
	}
	if status == StatusCancelled && reason == "" {
		return 0, stacks.FieldErrorf("reason", stacks.EINVALID, "Say why the hold is cancelled (the patron asked, item lost...).")
	}
	if !utf8.ValidString(reason) || utf8.RuneCountInString(reason) > maxReason || strings.ContainsFunc(reason, unicode.IsControl) {
		return 0, stacks.FieldErrorf("reason", stacks.EINVALID, "Give the reason on one line, in at most %d characters.", maxReason)
	}
	var recordID, trapped sql.NullInt64
	var priority int
	err = tx.QueryRow(`UPDATE holds SET status = ?, closed_at = ?, cancel_reason = ?
		WHERE id = ? AND status IN ('queued', 'in_transit', 'waiting')
		RETURNING record_id, priority, trapped_item_id`, status, db.FormatTime(tx.Now()), reason, holdID).Scan(&recordID, &priority, &trapped)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, stacks.Errorf(stacks.ECONFLICT, "Hold %d is no longer open.", holdID)
	} else if err != nil {
		return 0, fmt.Errorf("close hold %d: %w", holdID, err)
	}
	if err := closeGap(tx, recordID.Int64, priority); err != nil {
		return 0, err
	}
	if err := tx.Audit(actor, "hold."+status, "hold", holdID, reason); err != nil {
		return 0, err
	}
	return trapped.Int64, nil
}

// HoldShelf returns the holds waiting for pickup at a branch, soonest deadline first.
func HoldShelf(tx *db.Tx, branchID int64) ([]Hold, error) {
	rows, err := tx.Query(`SELECT `+holdColumns+holdFrom+`
		WHERE h.pickup_branch_id = ? AND h.status = 'waiting'
		ORDER BY h.pickup_by, h.id`, branchID)
	if err != nil {
		return nil, fmt.Errorf("hold shelf: %w", err)
	}
	return scanHolds(rows)
}

// PullItem is a copy on the shelf at a branch that a hold wants: staff pull it and
// check it in to trap it.
type PullItem struct {
	HoldID     int64
	RecordID   int64
	Title      string
	Author     string
	Barcode    string
	CallNumber string
	PatronName string
	PickupName string
	PlacedAt   time.Time
	// Holds is how many active holds the record has.
	Holds int
}

// PullList returns, for a branch, the available copies there that can fill the
// first active hold of their record (item-level holds for that very copy), one row
// per hold to fill, oldest hold first, in one query.
func PullList(tx *db.Tx, branchID int64, today time.Time) ([]PullItem, error) {
	day := today.Format(db.DayFormat)
	// Item-level holds want their own copy; record-level holds are matched in queue
	// order to the other copies on the shelf, one copy each.
	rows, err := tx.Query(`WITH active AS (
			SELECT h.*, row_number() OVER (PARTITION BY h.record_id, h.item_id IS NULL ORDER BY h.priority, h.id) AS n,
				count(*) OVER (PARTITION BY h.record_id) AS holds
			FROM holds h
			WHERE h.status = 'queued' AND (h.suspended_until IS NULL OR h.suspended_until <= ?2)),
		onshelf AS (
			SELECT i.* FROM items i JOIN item_types t ON t.id = i.item_type_id
			WHERE i.current_branch_id = ?1 AND i.status = 'available' AND t.not_for_loan = 0
				AND i.record_id IN (SELECT record_id FROM active)),
		free AS (
			SELECT s.*, row_number() OVER (PARTITION BY s.record_id ORDER BY s.id) AS n FROM onshelf s
			WHERE NOT EXISTS (SELECT 1 FROM active a WHERE a.item_id = s.id)),
		matched AS (
			SELECT a.id AS hold_id, s.id AS item_id FROM active a JOIN onshelf s ON s.id = a.item_id
			UNION ALL
			SELECT a.id, f.id FROM active a JOIN free f ON f.record_id = a.record_id AND f.n = a.n WHERE a.item_id IS NULL)
		SELECT a.id, a.record_id, r.title, r.author, i.barcode, i.call_number, p.first_name || ' ' || p.surname, b.name, a.placed_at, a.holds
		FROM matched m
		JOIN active a ON a.id = m.hold_id
		JOIN items i ON i.id = m.item_id
		JOIN records r ON r.id = a.record_id
		JOIN patrons p ON p.id = a.patron_id
		JOIN branches b ON b.id = a.pickup_branch_id
		ORDER BY a.placed_at, a.id`, branchID, day)
	if err != nil {
		return nil, fmt.Errorf("pull list: %w", err)
	}
	defer rows.Close()
	var out []PullItem
	for rows.Next() {
		var p PullItem
		var placed db.Time
		if err := rows.Scan(&p.HoldID, &p.RecordID, &p.Title, &p.Author, &p.Barcode, &p.CallNumber, &p.PatronName, &p.PickupName, &placed, &p.Holds); err != nil {
			return nil, err
		}
		p.PlacedAt = placed.Time
		out = append(out, p)
	}
	return out, rows.Err()
}
