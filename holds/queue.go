package holds

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"slices"
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

// holdShelf returns the holds waiting for pickup at a branch, soonest deadline first.
func holdShelf(tx *db.Tx, branchID int64) ([]Hold, error) {
	rows, err := tx.Query(`SELECT `+holdColumns+holdFrom+`
		WHERE h.pickup_branch_id = ? AND h.status = 'waiting'
		ORDER BY h.pickup_by, h.id`, branchID)
	if err != nil {
		return nil, fmt.Errorf("hold shelf: %w", err)
	}
	return scanHolds(rows)
}

// PullAskDays is how many days the pull list asks one branch for a copy for a
// hold before it asks the next branch that has one on its shelf.
const PullAskDays = 2

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
	// AskedUntil is the last day (a date, as midnight UTC) this branch is asked for
	// the copy before the next branch with one is; zero when no other branch could
	// be asked (an item-level hold, the only copy on a shelf).
	AskedUntil time.Time
	// OtherBranches is how many other branches have a copy the hold could be
	// asked of instead.
	OtherBranches int
}

// pullList returns the copies on the shelf at a branch that staff there should
// pull for holds: one row per hold to fill, oldest hold first, in two queries.
//
// A hold's copy is asked of one branch at a time, so that two branches never pull
// a copy for the same hold. Holds are served in queue order: an item-level hold
// wants its own copy, wherever it is; a record-level hold takes a copy that no hold
// ahead of it (nor any item-level hold) was given, from one branch: the pickup
// branch when it has one, else the other branches with one in turn, in the order
// of their ids, each for PullAskDays days counted from the day the hold became
// active (placed, or its suspension over), then round again. A copy that staff
// cannot find is marked missing ("Not on shelf"), which leaves it out at once, so
// the next copy or branch is asked.
func pullList(tx *db.Tx, branchID int64, today time.Time) ([]PullItem, error) {
	day := today.Format(db.DayFormat)
	// The active holds of the titles that have a copy on the shelf here, with
	// every copy of those titles on the shelf anywhere.
	const wanted = `SELECT h.record_id FROM holds h
		WHERE h.status = 'queued' AND (h.suspended_until IS NULL OR h.suspended_until <= ?2)
			AND EXISTS (SELECT 1 FROM items i JOIN item_types t ON t.id = i.item_type_id
				WHERE i.record_id = h.record_id AND i.current_branch_id = ?1 AND i.status = 'available' AND t.not_for_loan = 0)`
	hs, err := pullHolds(tx, wanted, branchID, today)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, nil
	}
	copies, err := pullCopies(tx, wanted, branchID, day)
	if err != nil {
		return nil, err
	}
	var out []PullItem
	for _, a := range assignPulls(hs, copies, today) {
		if a.copy.branchID == branchID {
			p := a.hold.PullItem
			p.Barcode, p.CallNumber = a.copy.barcode, a.copy.callNumber
			p.AskedUntil, p.OtherBranches = a.until, a.others
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b PullItem) int {
		if c := a.PlacedAt.Compare(b.PlacedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.HoldID, b.HoldID)
	})
	return out, nil
}

// pullHold is an active hold the pull list may ask a copy for.
type pullHold struct {
	PullItem
	itemID         int64
	pickupBranchID int64
	// since is the day the hold became active (placed, or its suspension over),
	// as midnight UTC of that day in the library's time zone.
	since time.Time
}

// pullCopy is a copy on the shelf that a hold could take.
type pullCopy struct {
	id, recordID, branchID int64
	barcode, callNumber    string
}

// pullAsk is a hold's copy, asked of the copy's branch until a day.
type pullAsk struct {
	hold   *pullHold
	copy   pullCopy
	until  time.Time
	others int
}

func pullHolds(tx *db.Tx, wanted string, branchID int64, today time.Time) ([]pullHold, error) {
	day := today.Format(db.DayFormat)
	rows, err := tx.Query(`SELECT h.id, h.record_id, r.title, r.author, p.first_name || ' ' || p.surname, b.name, h.placed_at,
			coalesce(h.item_id, 0), h.pickup_branch_id, coalesce(h.suspended_until, '')
		FROM holds h
		JOIN records r ON r.id = h.record_id
		JOIN patrons p ON p.id = h.patron_id
		JOIN branches b ON b.id = h.pickup_branch_id
		WHERE h.status = 'queued' AND (h.suspended_until IS NULL OR h.suspended_until <= ?2)
			AND h.record_id IN (`+wanted+`)
		ORDER BY h.record_id, h.priority, h.id`, branchID, day)
	if err != nil {
		return nil, fmt.Errorf("pull list: %w", err)
	}
	defer rows.Close()
	var out []pullHold
	for rows.Next() {
		var h pullHold
		var placed db.Time
		var suspended string
		if err := rows.Scan(&h.HoldID, &h.RecordID, &h.Title, &h.Author, &h.PatronName, &h.PickupName, &placed,
			&h.itemID, &h.pickupBranchID, &suspended); err != nil {
			return nil, err
		}
		h.PlacedAt = placed.Time
		h.since = dayOf(placed.Time.In(today.Location()))
		if s, err := time.Parse(db.DayFormat, suspended); err == nil && s.After(h.since) {
			h.since = s
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

func pullCopies(tx *db.Tx, wanted string, branchID int64, day string) ([]pullCopy, error) {
	rows, err := tx.Query(`SELECT i.id, i.record_id, i.current_branch_id, i.barcode, i.call_number
		FROM items i JOIN item_types t ON t.id = i.item_type_id
		WHERE i.status = 'available' AND t.not_for_loan = 0 AND i.record_id IN (`+wanted+`)
		ORDER BY i.record_id, i.id`, branchID, day)
	if err != nil {
		return nil, fmt.Errorf("pull list copies: %w", err)
	}
	defer rows.Close()
	var out []pullCopy
	for rows.Next() {
		var c pullCopy
		if err := rows.Scan(&c.id, &c.recordID, &c.branchID, &c.barcode, &c.callNumber); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// assignPulls gives each hold (in queue order, by record) at most one copy at one
// branch, and each copy to at most one hold, as pullList describes.
func assignPulls(hs []pullHold, copies []pullCopy, today time.Time) []pullAsk {
	byRecord := map[int64][]pullCopy{}
	for _, c := range copies {
		byRecord[c.recordID] = append(byRecord[c.recordID], c)
	}
	count := map[int64]int{}
	for _, h := range hs {
		count[h.RecordID]++
	}
	// taken: copies no record-level hold may have; asked: copies given to a hold.
	taken, asked := map[int64]bool{}, map[int64]bool{}
	// Item-level holds first: their copy is theirs whatever their place in the
	// queue (a checkin of it traps them before any record-level hold).
	for i := range hs {
		if hs[i].itemID != 0 {
			taken[hs[i].itemID] = true
		}
	}
	day := dayOf(today)
	var out []pullAsk
	for i := range hs {
		h := &hs[i]
		h.Holds = count[h.RecordID]
		if h.itemID != 0 {
			for _, c := range byRecord[h.RecordID] {
				if c.id == h.itemID && !asked[c.id] {
					asked[c.id] = true
					out = append(out, pullAsk{hold: h, copy: c})
				}
			}
			continue
		}
		// The first free copy at each branch that has one, the pickup branch first.
		var branches []pullCopy
		for _, c := range byRecord[h.RecordID] {
			if taken[c.id] || slices.ContainsFunc(branches, func(b pullCopy) bool { return b.branchID == c.branchID }) {
				continue
			}
			branches = append(branches, c)
		}
		if len(branches) == 0 {
			continue
		}
		slices.SortStableFunc(branches, func(a, b pullCopy) int {
			if (a.branchID == h.pickupBranchID) != (b.branchID == h.pickupBranchID) {
				if a.branchID == h.pickupBranchID {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.branchID, b.branchID)
		})
		days := max(0, int(day.Sub(h.since).Hours()/24))
		turn := days / PullAskDays
		c := branches[turn%len(branches)]
		taken[c.id], asked[c.id] = true, true
		until := day.AddDate(0, 0, (turn+1)*PullAskDays-days-1)
		if len(branches) == 1 {
			until = time.Time{}
		}
		out = append(out, pullAsk{hold: h, copy: c, until: until, others: len(branches) - 1})
	}
	return out
}

// dayOf is the calendar day of t, in t's location, as midnight UTC: days apart
// are then whole multiples of 24 hours.
func dayOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
