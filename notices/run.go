package notices

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// Settings the daily run reads from the preferences (an administrator changes
// them on the notices settings page).
const (
	// PrefHoldExpiringDays: tell a patron this many open days before a waiting
	// hold's pickup deadline (0: never).
	PrefHoldExpiringDays = "notices_hold_expiring_days"
	// PrefCardExpiryDays: tell a patron this many days before the card expires
	// (0: never).
	PrefCardExpiryDays = "notices_card_expiry_days"
	// PrefRunAt is the local time of day ("HH:MM") stacks serve runs the
	// notices; a --notices-at flag given to serve wins.
	PrefRunAt = "notices_run_at"

	DefaultHoldExpiringDays = 2
	DefaultCardExpiryDays   = 14
	DefaultRunAt            = "07:00"
)

// RunOptions control one daily run.
type RunOptions struct {
	// DryRun finds what would be queued and renders it, and changes nothing.
	DryRun bool
	// Force runs even when today's run already finished (it still queues
	// nothing twice).
	Force bool
	// ChunkSize is how many notice items one write transaction records (default
	// 100), and a quarter of it how many patrons' messages: a desk's write that
	// arrives meanwhile shares that transaction's commit (group commit), so it
	// waits for at most one chunk (docs/performance.md).
	ChunkSize int
	// Pace is the share of the time the run leaves the writer to others: after
	// each write transaction it waits Pace times as long as that took (default
	// 1: half the time; negative: no pause). The run is a background job; the
	// desk is not.
	Pace float64
	// AfterChunk, if set, runs after each committed write transaction; an error
	// stops the run there, as a crash would (tests use it).
	AfterChunk func() error
}

// RunResult says what a run did.
type RunResult struct {
	// Day is the library day run.
	Day string
	// Skipped: the day had already been run.
	Skipped bool
	// Items is the number of notice items recorded; Messages, of messages queued.
	Items    int
	Messages int
	// Preview holds, for a dry run, the messages that would be queued.
	Preview []PreviewMessage
}

// PreviewMessage is a message a dry run would queue.
type PreviewMessage struct {
	PatronCard string
	Delivery   string
	To         string
	Rendered
}

// Rule says when loan notices go out for a patron category and item type.
type Rule struct {
	ID               int64
	PatronCategoryID int64
	ItemTypeID       int64
	PredueDays       int
	OverdueDays      [3]int
}

func (r Rule) specificity() int {
	s := 0
	if r.PatronCategoryID != 0 {
		s += 10
	}
	if r.ItemTypeID != 0 {
		s += 9
	}
	return s
}

// listRules returns the notice rules, most specific first.
func listRules(tx *db.Tx) ([]Rule, error) {
	rows, err := tx.Query(`SELECT id, coalesce(patron_category_id, 0), coalesce(item_type_id, 0),
		predue_days, overdue1_days, overdue2_days, overdue3_days FROM notice_rules ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read notice rules: %w", err)
	}
	defer rows.Close()
	var out []Rule
	for rows.Next() {
		var r Rule
		if err := rows.Scan(&r.ID, &r.PatronCategoryID, &r.ItemTypeID, &r.PredueDays, &r.OverdueDays[0], &r.OverdueDays[1], &r.OverdueDays[2]); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Stable: among equally specific rules the older one first.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].specificity() > out[j-1].specificity(); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// Validate checks a rule an administrator entered.
func (r Rule) Validate() error {
	if r.PredueDays < 0 || r.PredueDays > 60 {
		return stacks.FieldErrorf("predue_days", stacks.EINVALID, "Days before the due date must be between 0 (no reminder) and 60.")
	}
	prev := 0
	for i, d := range r.OverdueDays {
		field := "overdue" + strconv.Itoa(i+1) + "_days"
		if d < 0 || d > 365 {
			return stacks.FieldErrorf(field, stacks.EINVALID, "Overdue notice %d: days must be between 0 (none) and 365.", i+1)
		}
		if d != 0 && d <= prev {
			return stacks.FieldErrorf(field, stacks.EINVALID, "Overdue notice %d must come later than notice %d (more days after the due date).", i+1, i)
		}
		if d != 0 {
			prev = d
		}
	}
	return nil
}

// saveRule adds a rule, or replaces the one for the same category and item type.
func saveRule(tx *db.Tx, actor stacks.Actor, r Rule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	for _, ref := range []struct {
		field, table string
		id           int64
	}{{"category", "patron_categories", r.PatronCategoryID}, {"item_type", "item_types", r.ItemTypeID}} {
		if ref.id == 0 {
			continue
		}
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM `+ref.table+` WHERE id = ?`, ref.id).Scan(&n); err != nil {
			return fmt.Errorf("save notice rule: %w", err)
		}
		if n == 0 {
			return stacks.FieldErrorf(ref.field, stacks.EINVALID, "Choose one from the list: that one does not exist.")
		}
	}
	null := func(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }
	_, err := tx.Exec(`DELETE FROM notice_rules WHERE coalesce(patron_category_id, 0) = ? AND coalesce(item_type_id, 0) = ?`,
		r.PatronCategoryID, r.ItemTypeID)
	if err != nil {
		return fmt.Errorf("save notice rule: %w", err)
	}
	_, err = tx.Exec(`INSERT INTO notice_rules (patron_category_id, item_type_id, predue_days, overdue1_days, overdue2_days, overdue3_days)
		VALUES (?, ?, ?, ?, ?, ?)`, null(r.PatronCategoryID), null(r.ItemTypeID), r.PredueDays, r.OverdueDays[0], r.OverdueDays[1], r.OverdueDays[2])
	if err != nil {
		return fmt.Errorf("save notice rule: %w", err)
	}
	return tx.Audit(actor, "notices.rule.save", "notice_rule", 0,
		fmt.Sprintf("category %d, item type %d: predue %d, overdue %v", r.PatronCategoryID, r.ItemTypeID, r.PredueDays, r.OverdueDays))
}

func resolveRule(rules []Rule, categoryID, itemTypeID int64) (Rule, bool) {
	for _, r := range rules {
		if (r.PatronCategoryID == 0 || r.PatronCategoryID == categoryID) && (r.ItemTypeID == 0 || r.ItemTypeID == itemTypeID) {
			return r, true
		}
	}
	return Rule{}, false
}

// runSettings are the preferences a run reads.
type runSettings struct {
	prefs            library.Preferences
	holdExpiringDays int
	cardExpiryDays   int
}

func loadSettings(tx *db.Tx) (runSettings, error) {
	p, err := library.LoadPreferences(tx)
	if err != nil {
		return runSettings{}, err
	}
	s := runSettings{prefs: p, holdExpiringDays: DefaultHoldExpiringDays, cardExpiryDays: DefaultCardExpiryDays}
	if n, err := strconv.Atoi(p.Raw[PrefHoldExpiringDays]); err == nil && n >= 0 {
		s.holdExpiringDays = n
	}
	if n, err := strconv.Atoi(p.Raw[PrefCardExpiryDays]); err == nil && n >= 0 {
		s.cardExpiryDays = n
	}
	return s, nil
}

// RunDaily runs the notices of the library day of d.Now(): it records every loan,
// hold and card notice due today and not yet recorded, then composes each
// patron's new items into one message per delivery. A day already run is skipped
// (unless opt.Force). Stopped half way (a crash, a restart), it can simply be run
// again: nothing is recorded or queued twice, nothing is missed.
//
// A day missed (the server was down) needs no run of its own: each trigger is a
// threshold (at least N open days overdue, due within N open days), so the next
// run finds what the missed one would have, and sends the latest level reached.
func RunDaily(ctx context.Context, d *db.DB, opt RunOptions) (RunResult, error) {
	if opt.ChunkSize <= 0 {
		opt.ChunkSize = 100
	}
	now := d.Now().UTC().Truncate(time.Second)
	var set runSettings
	var found []Item
	var res RunResult
	err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		if set, err = loadSettings(tx); err != nil {
			return err
		}
		res.Day = localDay(now, set.prefs.Location)
		if !opt.Force && !opt.DryRun {
			var finished sql.NullString
			err := tx.QueryRow(`SELECT finished_at FROM notice_runs WHERE library_day = ?`, res.Day).Scan(&finished)
			if err == nil && finished.Valid {
				res.Skipped = true
				return nil
			} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("read notice runs: %w", err)
			}
		}
		found, err = findDue(tx, set, now)
		return err
	})
	if err != nil || res.Skipped {
		return res, err
	}
	if opt.DryRun {
		res.Items = len(found)
		res.Preview, err = previewRun(ctx, d, set, res.Day, found)
		res.Messages = len(res.Preview)
		return res, err
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO notice_runs (library_day, started_at) VALUES (?, ?) ON CONFLICT (library_day) DO NOTHING`,
			res.Day, db.FormatTime(tx.Now()))
		return err
	})
	if err != nil {
		return res, fmt.Errorf("start notice run: %w", err)
	}
	for start := 0; start < len(found); start += opt.ChunkSize {
		chunk := found[start:min(start+opt.ChunkSize, len(found))]
		n := 0
		began := time.Now()
		err := d.Write(ctx, func(tx *db.Tx) error {
			var err error
			n, err = recordItems(tx, chunk, res.Day)
			return err
		})
		if err != nil {
			return res, err
		}
		pace(ctx, opt.Pace, time.Since(began))
		res.Items += n
		if opt.AfterChunk != nil {
			if err := opt.AfterChunk(); err != nil {
				return res, err
			}
		}
	}
	res.Messages, err = compose(ctx, d, composeOptions{day: res.Day, patronsPerTx: max(1, opt.ChunkSize/4), pace: opt.Pace, afterTx: opt.AfterChunk})
	if err != nil {
		return res, err
	}
	err = d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE notice_runs SET finished_at = ?, items = items + ?, messages = messages + ? WHERE library_day = ?`,
			db.FormatTime(tx.Now()), res.Items, res.Messages, res.Day)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("finish notice run: %w", err)
	}
	return res, nil
}

// pace waits factor times took (factor 0 means 1; below 0, no wait), or until
// ctx ends.
func pace(ctx context.Context, factor float64, took time.Duration) {
	if factor == 0 {
		factor = 1
	}
	if factor < 0 {
		return
	}
	t := time.NewTimer(time.Duration(factor * float64(took)))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// recordItems inserts items, skipping any already recorded; it returns how many
// were new. One statement per item.
func recordItems(tx *db.Tx, items []Item, day string) (int, error) {
	st, err := tx.Prepare(`INSERT INTO notice_items (trigger, object_id, occurrence, level, patron_id, library_day, created_at,
			title, author, barcode, at, branch_id, amount_cents)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (trigger, object_id, occurrence, level) DO NOTHING`)
	if err != nil {
		return 0, fmt.Errorf("record notice items: %w", err)
	}
	now := db.FormatTime(tx.Now())
	n := 0
	for _, it := range items {
		at := ""
		if !it.At.IsZero() {
			at = db.FormatTime(it.At)
		}
		var branch sql.NullInt64
		if it.BranchID != 0 {
			branch = sql.NullInt64{Int64: it.BranchID, Valid: true}
		}
		r, err := st.Exec(it.Trigger, it.ObjectID, it.Occurrence, it.Level, it.PatronID, day, now, it.Title, it.Author, it.Barcode, at, branch, it.AmountCents)
		if err != nil {
			return n, fmt.Errorf("record notice item: %w", err)
		}
		if k, _ := r.RowsAffected(); k > 0 {
			n++
		}
	}
	return n, nil
}

// calendars loads each branch's calendar once per run.
type calendars struct {
	tx       *db.Tx
	loc      *time.Location
	from, to time.Time
	m        map[int64]*library.Calendar
}

func (c *calendars) get(branchID int64) (*library.Calendar, error) {
	if cal, ok := c.m[branchID]; ok {
		return cal, nil
	}
	cal, err := library.LoadCalendar(c.tx, branchID, c.loc, c.from, c.to)
	if err != nil {
		return nil, err
	}
	c.m[branchID] = cal
	return cal, nil
}

// openDaysBetween counts the open days after from's local day up to and including
// to's, stopping at limit.
func openDaysBetween(cal *library.Calendar, from, to time.Time, limit int) int {
	loc := cal.Location
	f, t := from.In(loc), to.In(loc)
	d := time.Date(f.Year(), f.Month(), f.Day(), 12, 0, 0, 0, loc)
	end := time.Date(t.Year(), t.Month(), t.Day(), 12, 0, 0, 0, loc)
	n := 0
	for d = d.AddDate(0, 0, 1); !d.After(end) && n < limit; d = d.AddDate(0, 0, 1) {
		if cal.IsOpen(d) {
			n++
		}
	}
	return n
}

// findDue finds every notice item due at now and not yet recorded: a handful of
// queries whatever the number of loans. Loans (reminders and overdues), holds
// waiting on the shelf, and cards about to expire are each a step of their own.
func findDue(tx *db.Tx, set runSettings, now time.Time) ([]Item, error) {
	rules, err := listRules(tx)
	if err != nil {
		return nil, err
	}
	maxPredue := 0
	for _, r := range rules {
		maxPredue = max(maxPredue, r.PredueDays)
	}
	cals := &calendars{tx: tx, loc: set.prefs.Location, from: now.AddDate(-1, 0, 0), to: now.AddDate(0, 0, 2*max(maxPredue, set.holdExpiringDays)+60), m: map[int64]*library.Calendar{}}
	loans, err := dueLoanNotices(tx, rules, cals, maxPredue, now)
	if err != nil {
		return nil, err
	}
	holds, err := dueHoldNotices(tx, cals, set.holdExpiringDays, now)
	if err != nil {
		return nil, err
	}
	cards, err := dueCardNotices(tx, set.cardExpiryDays, set.prefs.Location, now)
	if err != nil {
		return nil, err
	}
	return append(append(loans, holds...), cards...), nil
}

// openLoan is a loan that may be due for a notice, with the notices it already
// had for its current due date.
type openLoan struct {
	Item
	itemType, category int64
	// level is the highest overdue notice it had; predueSent, whether it had the
	// reminder.
	level      int
	predueSent bool
}

// dueLoanNotices finds the reminders and overdue notices due at now.
func dueLoanNotices(tx *db.Tx, rules []Rule, cals *calendars, maxPredue int, now time.Time) ([]Item, error) {
	loans, err := readOpenLoans(tx, now.AddDate(0, 0, 2*maxPredue+14))
	if err != nil {
		return nil, err
	}
	var out []Item
	for _, l := range loans {
		rule, ok := resolveRule(rules, l.category, l.itemType)
		if !ok {
			continue
		}
		cal, err := cals.get(l.BranchID)
		if err != nil {
			return nil, err
		}
		if it, ok := loanNotice(l, rule, cal, now); ok {
			out = append(out, it)
		}
	}
	return out, nil
}

// readOpenLoans reads the loans due before horizon (the reminder window, in
// open days, so a generous calendar window first) or overdue, and neither
// declared lost (its bill is the notice) nor claimed returned, with the notices
// they already had for their current due date (a renewal starts again: a
// reminder, then overdue 1).
func readOpenLoans(tx *db.Tx, horizon time.Time) ([]openLoan, error) {
	rows, err := tx.Query(`SELECT l.id, l.patron_id, l.branch_id, b.name, l.due_at, i.item_type_id, p.category_id,
			i.barcode, r.title, r.author,
			coalesce((SELECT max(n.level) FROM notice_items n WHERE n.trigger = 'overdue' AND n.object_id = l.id AND n.occurrence = l.due_at), 0),
			EXISTS (SELECT 1 FROM notice_items n WHERE n.trigger = 'predue' AND n.object_id = l.id AND n.occurrence = l.due_at AND n.level = 0)
		FROM loans l
		JOIN items i ON i.id = l.item_id
		JOIN records r ON r.id = i.record_id
		JOIN patrons p ON p.id = l.patron_id
		JOIN branches b ON b.id = l.branch_id
		WHERE l.returned_at IS NULL AND l.due_at < ? AND l.lost_at IS NULL AND l.claimed_returned_at IS NULL
		ORDER BY l.id`, db.FormatTime(horizon))
	if err != nil {
		return nil, fmt.Errorf("find loans for notices: %w", err)
	}
	defer rows.Close()
	var loans []openLoan
	for rows.Next() {
		var l openLoan
		var due string
		if err := rows.Scan(&l.ObjectID, &l.PatronID, &l.BranchID, &l.BranchName, &due, &l.itemType, &l.category,
			&l.Barcode, &l.Title, &l.Author, &l.level, &l.predueSent); err != nil {
			return nil, err
		}
		if l.At, err = db.ParseTime(due); err != nil {
			return nil, err
		}
		l.Occurrence = due
		loans = append(loans, l)
	}
	return loans, rows.Err()
}

// loanNotice says which notice, if any, a loan is due at now under its rule:
// the next overdue level once enough open days have passed since the due day,
// or the reminder within PredueDays open days of it (the due day counts).
func loanNotice(l openLoan, rule Rule, cal *library.Calendar, now time.Time) (Item, bool) {
	it := l.Item
	if now.After(l.At) {
		limit := max(rule.OverdueDays[0], rule.OverdueDays[1], rule.OverdueDays[2])
		late := openDaysBetween(cal, l.At, now, limit)
		level := 0
		for k, days := range rule.OverdueDays {
			if days > 0 && late >= days {
				level = k + 1
			}
		}
		it.Trigger, it.Level = TriggerOverdue, level
		return it, level > l.level
	}
	if rule.PredueDays > 0 && !l.predueSent && l.level == 0 &&
		openDaysBetween(cal, now, l.At, rule.PredueDays+1) <= rule.PredueDays {
		it.Trigger = TriggerPredue
		return it, true
	}
	return Item{}, false
}

// waitingHold is a hold waiting on the shelf, with the notices it had for its
// current trap (a hold released and trapped again is told again).
type waitingHold struct {
	Item
	availSent, expSent bool
}

// dueHoldNotices finds the holds waiting on the shelf whose patron was never
// told (trapped before notices existed, or by a path that did not record it),
// and those whose pickup deadline is within holdExpiringDays open days.
func dueHoldNotices(tx *db.Tx, cals *calendars, holdExpiringDays int, now time.Time) ([]Item, error) {
	hs, err := readWaitingHolds(tx)
	if err != nil {
		return nil, err
	}
	var out []Item
	for _, h := range hs {
		it := h.Item
		if !h.availSent {
			it.Trigger = TriggerHoldAvailable
			out = append(out, it)
			continue // the patron has not been told yet: the expiry warning can wait.
		}
		if holdExpiringDays <= 0 || h.expSent || h.At.IsZero() || !now.Before(h.At) {
			continue
		}
		cal, err := cals.get(h.BranchID)
		if err != nil {
			return nil, err
		}
		if openDaysBetween(cal, now, h.At, holdExpiringDays+1) <= holdExpiringDays {
			it.Trigger = TriggerHoldExpiring
			out = append(out, it)
		}
	}
	return out, nil
}

// readWaitingHolds reads every hold waiting on the shelf, with the notices of
// its current trap.
func readWaitingHolds(tx *db.Tx) ([]waitingHold, error) {
	rows, err := tx.Query(`SELECT h.id, h.patron_id, h.pickup_branch_id, b.name, coalesce(h.pickup_by, ''), r.title, r.author,
			coalesce(i.barcode, ''), coalesce(h.waiting_since, ''),
			EXISTS (SELECT 1 FROM notice_items n WHERE n.trigger = 'hold_available' AND n.object_id = h.id
				AND n.occurrence = coalesce(h.waiting_since, '') AND n.level = 0),
			EXISTS (SELECT 1 FROM notice_items n WHERE n.trigger = 'hold_expiring' AND n.object_id = h.id
				AND n.occurrence = coalesce(h.waiting_since, '') AND n.level = 0)
		FROM holds h
		JOIN records r ON r.id = h.record_id
		JOIN branches b ON b.id = h.pickup_branch_id
		LEFT JOIN items i ON i.id = h.trapped_item_id
		WHERE h.status = 'waiting'
		ORDER BY h.id`)
	if err != nil {
		return nil, fmt.Errorf("find holds for notices: %w", err)
	}
	defer rows.Close()
	var hs []waitingHold
	for rows.Next() {
		var h waitingHold
		var by string
		if err := rows.Scan(&h.ObjectID, &h.PatronID, &h.BranchID, &h.BranchName, &by, &h.Title, &h.Author, &h.Barcode, &h.Occurrence, &h.availSent, &h.expSent); err != nil {
			return nil, err
		}
		if by != "" {
			h.At, _ = db.ParseTime(by)
		}
		hs = append(hs, h)
	}
	return hs, rows.Err()
}

// dueCardNotices finds the cards expiring within cardExpiryDays (calendar
// days: the card's date does not move for closed days) not yet told of.
func dueCardNotices(tx *db.Tx, cardExpiryDays int, loc *time.Location, now time.Time) ([]Item, error) {
	if cardExpiryDays <= 0 {
		return nil, nil
	}
	today := localDay(now, loc)
	until := now.In(loc).AddDate(0, 0, cardExpiryDays).Format(db.DayFormat)
	rows, err := tx.Query(`SELECT p.id, p.expires_on, p.home_branch_id
		FROM patrons p
		WHERE p.expires_on >= ? AND p.expires_on <= ?
		  AND NOT EXISTS (SELECT 1 FROM notice_items n WHERE n.trigger = 'card_expiry' AND n.object_id = p.id
			AND n.level = CAST(replace(p.expires_on, '-', '') AS INTEGER))
		ORDER BY p.id`, today, until)
	if err != nil {
		return nil, fmt.Errorf("find cards for notices: %w", err)
	}
	defer rows.Close()
	var out []Item
	for rows.Next() {
		var it Item
		var day string
		if err := rows.Scan(&it.PatronID, &day, &it.BranchID); err != nil {
			return nil, err
		}
		it.Trigger, it.ObjectID = TriggerCardExpiry, it.PatronID
		it.Level, _ = strconv.Atoi(strings.ReplaceAll(day, "-", ""))
		if t, err := time.ParseInLocation(db.DayFormat, day, loc); err == nil {
			it.At = t
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// previewRun renders what a run would queue, writing nothing: found items and
// items already waiting to be composed, grouped as Compose would.
func previewRun(ctx context.Context, d *db.DB, set runSettings, day string, found []Item) ([]PreviewMessage, error) {
	var out []PreviewMessage
	err := d.Read(ctx, func(tx *db.Tx) error {
		r, err := newRenderer(tx, set.prefs.LibraryName, set.prefs.Location)
		if err != nil {
			return err
		}
		waiting, err := readNewItems(tx, false)
		if err != nil {
			return err
		}
		byPatron := map[int64][]Item{}
		var order []int64
		for _, w := range waiting {
			if w.stale {
				continue
			}
			if _, ok := byPatron[w.PatronID]; !ok {
				order = append(order, w.PatronID)
			}
			byPatron[w.PatronID] = append(byPatron[w.PatronID], w.Item)
		}
		for _, it := range found {
			if _, ok := byPatron[it.PatronID]; !ok {
				order = append(order, it.PatronID)
			}
			byPatron[it.PatronID] = append(byPatron[it.PatronID], it)
		}
		infos, err := patronInfos(tx, order)
		if err != nil {
			return err
		}
		chosen, err := choicesOf(tx, order)
		if err != nil {
			return err
		}
		dayT, _ := time.ParseInLocation(db.DayFormat, day, set.prefs.Location)
		for _, pid := range order {
			p := infos[pid]
			groups := map[string][]Item{}
			for _, it := range byPatron[pid] {
				dl := chosen[pid][it.Trigger]
				if dl == "" {
					dl = DefaultDelivery(p.Email)
				}
				if dl == DeliveryEmail && strings.TrimSpace(p.Email) == "" {
					dl = DeliveryPrint
				}
				groups[dl] = append(groups[dl], it)
			}
			for _, dl := range []string{DeliveryEmail, DeliveryPrint} {
				if len(groups[dl]) == 0 {
					continue
				}
				m, err := r.render(p.data(), dayT, groups[dl])
				if err != nil {
					return err
				}
				pm := PreviewMessage{PatronCard: p.Card, Delivery: dl, Rendered: m}
				if dl == DeliveryEmail {
					pm.To = p.Email
				}
				out = append(out, pm)
			}
		}
		return nil
	})
	return out, err
}

// choicesOf reads the delivery choices of the patrons of ids, a few hundred per
// query: patron, kind, delivery.
func choicesOf(tx *db.Tx, ids []int64) (map[int64]map[string]string, error) {
	out := map[int64]map[string]string{}
	for start := 0; start < len(ids); start += 500 {
		q, args := inList(`SELECT patron_id, kind, delivery FROM notice_preferences WHERE patron_id IN `, ids[start:min(start+500, len(ids))])
		rows, err := tx.Query(q, args...)
		if err != nil {
			return nil, fmt.Errorf("read notice preferences: %w", err)
		}
		for rows.Next() {
			var id int64
			var k, v string
			if err := rows.Scan(&id, &k, &v); err != nil {
				rows.Close()
				return nil, err
			}
			if out[id] == nil {
				out[id] = map[string]string{}
			}
			out[id][k] = v
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// patronInfos reads the patrons of ids, a few hundred per query.
func patronInfos(tx *db.Tx, ids []int64) (map[int64]patronInfo, error) {
	out := map[int64]patronInfo{}
	for start := 0; start < len(ids); start += 500 {
		q, args := inList(`SELECT id, card, first_name, surname, email, home_branch_id, category_id, expires_on FROM patrons WHERE id IN `,
			ids[start:min(start+500, len(ids))])
		rows, err := tx.Query(q, args...)
		if err != nil {
			return nil, fmt.Errorf("read patrons for notices: %w", err)
		}
		for rows.Next() {
			var p patronInfo
			if err := rows.Scan(&p.ID, &p.Card, &p.FirstName, &p.Surname, &p.Email, &p.HomeBranchID, &p.CategoryID, &p.ExpiresOn); err != nil {
				rows.Close()
				return nil, err
			}
			out[p.ID] = p
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
