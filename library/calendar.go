package library

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Branch is a library branch.
type Branch struct {
	ID   int64
	Code string
	Name string
	// ClosedWeekdays are the weekdays the branch is always closed.
	ClosedWeekdays []time.Weekday
	// ClosesAt is the local closing time, "HH:MM".
	ClosesAt string
}

const branchColumns = `id, code, name, closed_weekdays, closes_at`

func scanBranch(row interface{ Scan(...any) error }) (Branch, error) {
	var b Branch
	var wd string
	if err := row.Scan(&b.ID, &b.Code, &b.Name, &wd, &b.ClosesAt); err != nil {
		return Branch{}, err
	}
	b.ClosedWeekdays = parseWeekdays(wd)
	return b, nil
}

func parseWeekdays(s string) []time.Weekday {
	var out []time.Weekday
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		for _, c := range part {
			if c >= '0' && c <= '6' {
				out = append(out, time.Weekday(c-'0'))
			}
		}
	}
	return out
}

// FormatWeekdays stores weekdays as digits, Sunday 0.
func FormatWeekdays(days []time.Weekday) string {
	var b strings.Builder
	for _, d := range days {
		b.WriteString(strconv.Itoa(int(d)))
	}
	return b.String()
}

// ListBranches returns every branch, by name.
func ListBranches(tx *db.Tx) ([]Branch, error) {
	rows, err := tx.Query(`SELECT ` + branchColumns + ` FROM branches ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list branches: %w", err)
	}
	defer rows.Close()
	var bs []Branch
	for rows.Next() {
		b, err := scanBranch(rows)
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	return bs, rows.Err()
}

// FindBranchByCode returns the branch with the given code.
func FindBranchByCode(tx *db.Tx, code string) (Branch, error) {
	b, err := scanBranch(tx.QueryRow(`SELECT `+branchColumns+` FROM branches WHERE code = ?`, strings.ToUpper(strings.TrimSpace(code))))
	if errors.Is(err, sql.ErrNoRows) {
		return Branch{}, stacks.Errorf(stacks.ENOTFOUND, "There is no branch with code %q.", code)
	} else if err != nil {
		return Branch{}, fmt.Errorf("find branch %q: %w", code, err)
	}
	return b, nil
}

// findBranch returns the branch with the given id.
func findBranch(tx *db.Tx, id int64) (Branch, error) {
	b, err := scanBranch(tx.QueryRow(`SELECT `+branchColumns+` FROM branches WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Branch{}, stacks.Errorf(stacks.ENOTFOUND, "There is no branch with id %d.", id)
	} else if err != nil {
		return Branch{}, fmt.Errorf("find branch %d: %w", id, err)
	}
	return b, nil
}

// Calendar answers, for one branch, which days are open, when loans fall due and
// how many days of a late return are chargeable. It is loaded for a range of days
// in one query; days outside the range count only the weekly closures.
type Calendar struct {
	Branch   Branch
	Location *time.Location
	closeH   int
	closeM   int
	weekly   [7]bool
	closed   map[string]string // day -> description
}

// LoadCalendar loads the calendar of a branch for the days from..to (inclusive,
// local dates), in one query.
func LoadCalendar(tx *db.Tx, branchID int64, loc *time.Location, from, to time.Time) (*Calendar, error) {
	if loc == nil {
		loc = time.UTC
	}
	rows, err := tx.Query(`SELECT b.id, b.code, b.name, b.closed_weekdays, b.closes_at, d.day, d.description
		FROM branches b
		LEFT JOIN closed_days d ON (d.branch_id = b.id OR d.branch_id IS NULL) AND d.day BETWEEN ? AND ?
		WHERE b.id = ?`,
		from.In(loc).Format(db.DayFormat), to.In(loc).Format(db.DayFormat), branchID)
	if err != nil {
		return nil, fmt.Errorf("load calendar: %w", err)
	}
	defer rows.Close()
	var b Branch
	closed := map[string]string{}
	found := false
	for rows.Next() {
		var wd string
		var day, desc sql.NullString
		if err := rows.Scan(&b.ID, &b.Code, &b.Name, &wd, &b.ClosesAt, &day, &desc); err != nil {
			return nil, err
		}
		found = true
		b.ClosedWeekdays = parseWeekdays(wd)
		if day.Valid {
			closed[day.String] = desc.String
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, stacks.Errorf(stacks.ENOTFOUND, "There is no branch with id %d.", branchID)
	}
	return NewCalendar(b, loc, closed), nil
}

// NewCalendar builds a calendar from known parts: the branch (its weekly
// closures and closing time) and its closed days (day -> description, copied).
// LoadCalendar reads them from the database; tests give them directly.
func NewCalendar(b Branch, loc *time.Location, closedDays map[string]string) *Calendar {
	if loc == nil {
		loc = time.UTC
	}
	c := &Calendar{Branch: b, Location: loc, closed: map[string]string{}}
	for k, v := range closedDays {
		c.closed[k] = v
	}
	for _, d := range b.ClosedWeekdays {
		c.weekly[d] = true
	}
	if _, err := fmt.Sscanf(b.ClosesAt, "%d:%d", &c.closeH, &c.closeM); err != nil {
		c.closeH, c.closeM = 20, 0
	}
	return c
}

// day returns midnight of t's local date.
func (c *Calendar) day(t time.Time) time.Time {
	t = t.In(c.Location)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, c.Location)
}

// IsOpen reports whether the branch is open on t's local date.
func (c *Calendar) IsOpen(t time.Time) bool {
	d := c.day(t)
	if c.weekly[d.Weekday()] {
		return false
	}
	_, closed := c.closed[d.Format(db.DayFormat)]
	return !closed
}

// NextOpenDay returns the first open day on or after t's local date (midnight). A
// branch closed every day of the week has no open day: t's day is returned.
func (c *Calendar) NextOpenDay(t time.Time) time.Time {
	d := c.day(t)
	for i := 0; i < 366; i++ {
		if c.IsOpen(d) {
			return d
		}
		d = d.AddDate(0, 0, 1)
	}
	return c.day(t)
}

// closing returns the closing instant on day d's local date.
func (c *Calendar) closing(d time.Time) time.Time {
	d = c.day(d)
	return time.Date(d.Year(), d.Month(), d.Day(), c.closeH, c.closeM, 0, 0, c.Location)
}

// DueAt returns when a loan issued at issued for period units falls due. Day loans
// fall due at closing time on an open day: a due date on a closed day moves to the
// next open day. Hour loans fall due period hours later, but never after closing on
// the day they were issued if the branch closes before then (the item must come back
// while the branch is open); issued after closing, they run the full period.
func (c *Calendar) DueAt(issued time.Time, period int, unit string) time.Time {
	if unit == "hours" {
		due := issued.Add(time.Duration(period) * time.Hour)
		if closeToday := c.closing(issued); issued.Before(closeToday) && due.After(closeToday) {
			return closeToday.UTC()
		}
		return due.UTC()
	}
	d := c.day(issued).AddDate(0, 0, period)
	return c.closing(c.NextOpenDay(d)).UTC()
}

// LateUnits returns how many chargeable units a return at returned is late for a
// loan due at due: open days after the due day up to the return day (closed days
// are not charged), or started hours for hour loans.
func (c *Calendar) LateUnits(due, returned time.Time, unit string) int {
	if !returned.After(due) {
		return 0
	}
	if unit == "hours" {
		h := returned.Sub(due).Hours()
		n := int(h)
		if float64(n) < h {
			n++
		}
		return n
	}
	n := 0
	end := c.day(returned)
	for d := c.day(due).AddDate(0, 0, 1); !d.After(end); d = d.AddDate(0, 0, 1) {
		if c.IsOpen(d) {
			n++
		}
	}
	return n
}

// AddOpenDays returns closing time on the n-th open day after t's day (the day of t
// itself not counted): a hold trapped today with 7 pickup days may be collected
// until closing on the 7th open day from tomorrow. With n <= 0 it is closing time on
// the next open day on or after t's day.
func (c *Calendar) AddOpenDays(t time.Time, n int) time.Time {
	d := c.day(t)
	if n <= 0 {
		return c.closing(c.NextOpenDay(d)).UTC()
	}
	for counted, i := 0, 0; counted < n && i < 3660; i++ {
		d = d.AddDate(0, 0, 1)
		if c.IsOpen(d) {
			counted++
		}
	}
	return c.closing(d).UTC()
}
