package notices

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// QueueHoldAvailable records that a hold is waiting on the shelf, inside the
// transaction that trapped it: the notice exists exactly when the trap committed,
// and goes out within minutes (the sender composes hold notices at once), not at
// the next daily run. A hold trapped again (scanned twice) is not recorded again.
// One statement; nothing happens unless the hold is waiting.
func QueueHoldAvailable(tx *db.Tx, holdID int64, loc *time.Location) error {
	_, err := tx.Exec(`INSERT INTO notice_items (trigger, object_id, occurrence, level, patron_id, library_day, created_at,
			title, author, barcode, at, branch_id)
		SELECT 'hold_available', h.id, coalesce(h.waiting_since, ''), 0, h.patron_id, ?, ?, r.title, r.author, coalesce(i.barcode, ''),
			coalesce(h.pickup_by, ''), h.pickup_branch_id
		FROM holds h
		JOIN records r ON r.id = h.record_id
		LEFT JOIN items i ON i.id = h.trapped_item_id
		WHERE h.id = ? AND h.status = 'waiting'
		ON CONFLICT (trigger, object_id, occurrence, level) DO NOTHING`,
		localDay(tx.Now(), loc), db.FormatTime(tx.Now()), holdID)
	if err != nil {
		return fmt.Errorf("queue hold notice for hold %d: %w", holdID, err)
	}
	return nil
}

// QueueLostBill records that a patron was billed amountCents for the lost item of
// a loan, inside the transaction that bills it (the lost items work calls it).
// The bill goes out in the patron's next digest. A loan is billed once.
func QueueLostBill(tx *db.Tx, loanID, amountCents int64, loc *time.Location) error {
	res, err := tx.Exec(`INSERT INTO notice_items (trigger, object_id, level, patron_id, library_day, created_at,
			title, author, barcode, at, branch_id, amount_cents)
		SELECT 'lost_bill', l.id, 0, l.patron_id, ?, ?, r.title, r.author, i.barcode, l.due_at, l.branch_id, ?
		FROM loans l
		JOIN items i ON i.id = l.item_id
		JOIN records r ON r.id = i.record_id
		WHERE l.id = ?
		ON CONFLICT (trigger, object_id, occurrence, level) DO NOTHING`,
		localDay(tx.Now(), loc), db.FormatTime(tx.Now()), amountCents, loanID)
	if err != nil {
		return fmt.Errorf("queue lost item bill for loan %d: %w", loanID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var exists bool
		if err := tx.QueryRow(`SELECT EXISTS (SELECT 1 FROM loans WHERE id = ?)`, loanID).Scan(&exists); err != nil {
			return fmt.Errorf("queue lost item bill for loan %d: %w", loanID, err)
		}
		if !exists {
			return stacks.Errorf(stacks.ENOTFOUND, "There is no loan %d to bill.", loanID)
		}
	}
	return nil
}

// localDay is the library day of t.
func localDay(t time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format(db.DayFormat)
}

// composeOptions bound one Compose.
type composeOptions struct {
	// immediate composes only hold notices (the sender's frequent pass); the
	// daily run composes every new item, so each patron gets one digest.
	immediate bool
	// day is the library day the messages are for.
	day string
	// patronsPerTx is how many patrons' messages one write transaction holds.
	patronsPerTx int
	// pace: see RunOptions.Pace.
	pace float64
	// afterTx runs after each committed transaction (tests stop a run there).
	afterTx func() error
}

// newItem is an item waiting to be composed, with its patron.
type newItem struct {
	Item
	patron    patronInfo
	preferred string
	stale     bool
}

// compose groups the new items of each patron into one message per delivery,
// renders it and queues it. It returns the number of messages queued.
func compose(ctx context.Context, d *db.DB, opt composeOptions) (int, error) {
	var items []newItem
	var prefs library.Preferences
	var r *renderer
	err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		if prefs, err = library.LoadPreferences(tx); err != nil {
			return err
		}
		if r, err = newRenderer(tx, prefs.LibraryName, prefs.Location); err != nil {
			return err
		}
		items, err = readNewItems(tx, opt.immediate)
		return err
	})
	if err != nil || len(items) == 0 {
		return 0, err
	}
	if opt.day == "" {
		opt.day = localDay(d.Now(), prefs.Location)
	}
	if opt.patronsPerTx <= 0 {
		opt.patronsPerTx = 25
	}
	dayT, _ := time.ParseInLocation(db.DayFormat, opt.day, prefs.Location)

	// Render outside the write transactions: only the inserts hold the writer.
	type group struct {
		patron   patronInfo
		delivery string
		ids      []int64
		msg      Rendered
	}
	var batches [][]group
	var batch []group
	patrons := 0
	for start := 0; start < len(items); {
		end := start
		for end < len(items) && items[end].PatronID == items[start].PatronID {
			end++
		}
		byDelivery := map[string][]Item{}
		idsBy := map[string][]int64{}
		p := items[start].patron
		for _, it := range items[start:end] {
			dl := it.preferred
			if dl == "" {
				dl = DefaultDelivery(p.Email)
			}
			if dl == DeliveryEmail && strings.TrimSpace(p.Email) == "" {
				dl = DeliveryPrint
			}
			if it.stale {
				dl = "stale"
			}
			byDelivery[dl] = append(byDelivery[dl], it.Item)
			idsBy[dl] = append(idsBy[dl], it.ID)
		}
		for _, dl := range []string{DeliveryEmail, DeliveryPrint, DeliveryNone, "stale"} {
			if len(idsBy[dl]) == 0 {
				continue
			}
			g := group{patron: p, delivery: dl, ids: idsBy[dl]}
			if dl == DeliveryEmail || dl == DeliveryPrint {
				if g.msg, err = r.render(p.data(), dayT, byDelivery[dl]); err != nil {
					return 0, err
				}
			}
			batch = append(batch, g)
		}
		patrons++
		if patrons%opt.patronsPerTx == 0 {
			batches, batch = append(batches, batch), nil
		}
		start = end
	}
	if len(batch) > 0 {
		batches = append(batches, batch)
	}

	queued := 0
	var lastTook time.Duration
	for i, b := range batches {
		if i > 0 {
			pace(ctx, opt.pace, lastTook)
		}
		began := time.Now()
		n := 0
		err := d.Write(ctx, func(tx *db.Tx) error {
			n = 0
			now := db.FormatTime(tx.Now())
			for _, g := range b {
				var msgID sql.NullInt64
				if g.delivery == DeliveryEmail || g.delivery == DeliveryPrint {
					to := ""
					if g.delivery == DeliveryEmail {
						to = strings.TrimSpace(g.patron.Email)
					}
					var id int64
					err := tx.QueryRow(`INSERT INTO notice_messages (patron_id, delivery, branch_id, library_day, to_address,
							subject, body_text, body_html, status, next_attempt_at, created_at)
						VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) RETURNING id`,
						g.patron.ID, g.delivery, g.patron.HomeBranchID, opt.day, to,
						g.msg.Subject, g.msg.Text, g.msg.HTML, now, now).Scan(&id)
					if err != nil {
						return fmt.Errorf("queue notice for patron %d: %w", g.patron.ID, err)
					}
					msgID = sql.NullInt64{Int64: id, Valid: true}
					n++
				}
				// Only items still new: a concurrent compose that got there first wins.
				q, args := inList(`UPDATE notice_items SET delivery = ?, message_id = ? WHERE delivery = '' AND id IN `, g.ids, g.delivery, msgID)
				res, err := tx.Exec(q, args...)
				if err != nil {
					return fmt.Errorf("compose notice items: %w", err)
				}
				if k, _ := res.RowsAffected(); int(k) != len(g.ids) {
					return stacks.Errorf(stacks.ECONFLICT, "Notices were composed by another process at the same time; run again.")
				}
			}
			return nil
		})
		if err != nil {
			return queued, err
		}
		lastTook = time.Since(began)
		queued += n
		if opt.afterTx != nil {
			if err := opt.afterTx(); err != nil {
				return queued, err
			}
		}
	}
	return queued, nil
}

// inList appends "(?, ?, ...)" for ids to q, after the leading args.
func inList(q string, ids []int64, lead ...any) (string, []any) {
	var b strings.Builder
	b.WriteString(q)
	b.WriteByte('(')
	args := append([]any{}, lead...)
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('?')
		args = append(args, id)
	}
	b.WriteByte(')')
	return b.String(), args
}

// staleItem is true for a notice item (alias n) that no longer holds: its loan was
// returned, renewed (another due date), declared lost or claimed returned; a lost
// bill's loan is no longer lost and open (the item came back before the notice
// went); its hold is no longer waiting or was trapped again since. Compose closes such items without a message, and Deliver
// cancels a queued message whose items are all stale.
const staleItem = `CASE
		WHEN n.trigger IN ('predue', 'overdue') THEN
			NOT EXISTS (SELECT 1 FROM loans l WHERE l.id = n.object_id AND l.returned_at IS NULL
				AND l.lost_at IS NULL AND l.claimed_returned_at IS NULL
				AND (n.occurrence = '' OR l.due_at = n.occurrence))
		WHEN n.trigger = 'lost_bill' THEN
			NOT EXISTS (SELECT 1 FROM loans l WHERE l.id = n.object_id AND l.returned_at IS NULL
				AND l.lost_at IS NOT NULL)
		WHEN n.trigger IN ('hold_available', 'hold_expiring') THEN
			NOT EXISTS (SELECT 1 FROM holds h WHERE h.id = n.object_id AND h.status = 'waiting'
				AND (n.occurrence = '' OR h.waiting_since = n.occurrence))
		ELSE FALSE
	END`

// readNewItems reads the items not yet composed, by patron, in one query. A stale
// item (staleItem) is closed without a message.
func readNewItems(tx *db.Tx, immediate bool) ([]newItem, error) {
	q := `SELECT n.id, n.trigger, n.object_id, n.occurrence, n.level, n.patron_id, n.library_day, n.title, n.author, n.barcode, n.at,
			coalesce(n.branch_id, 0), coalesce(b.name, ''), n.amount_cents,
			p.card, p.first_name, p.surname, p.email, p.home_branch_id, coalesce(np.delivery, ''),
			` + staleItem + `
		FROM notice_items n
		JOIN patrons p ON p.id = n.patron_id
		LEFT JOIN branches b ON b.id = n.branch_id
		LEFT JOIN notice_preferences np ON np.patron_id = n.patron_id AND np.kind = n.trigger
		WHERE n.delivery = ''`
	if immediate {
		q += ` AND n.trigger = 'hold_available'`
	}
	q += ` ORDER BY n.patron_id, n.id`
	rows, err := tx.Query(q)
	if err != nil {
		return nil, fmt.Errorf("read new notice items: %w", err)
	}
	defer rows.Close()
	var out []newItem
	for rows.Next() {
		var it newItem
		var at string
		if err := rows.Scan(&it.ID, &it.Trigger, &it.ObjectID, &it.Occurrence, &it.Level, &it.PatronID, &it.Day, &it.Title, &it.Author, &it.Barcode, &at,
			&it.BranchID, &it.BranchName, &it.AmountCents,
			&it.patron.Card, &it.patron.FirstName, &it.patron.Surname, &it.patron.Email, &it.patron.HomeBranchID, &it.preferred,
			&it.stale); err != nil {
			return nil, err
		}
		it.patron.ID = it.PatronID
		if at != "" {
			if t, err := db.ParseTime(at); err == nil {
				it.At = t
			}
		}
		out = append(out, it)
	}
	return out, rows.Err()
}
