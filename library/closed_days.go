package library

import (
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

// ClosedDay is a single day (a holiday) on which one branch, or every branch, is
// closed: loans do not fall due on it and late days on it are not charged.
type ClosedDay struct {
	ID int64
	// BranchID is 0 when every branch is closed.
	BranchID int64
	// BranchName is empty when every branch is closed.
	BranchName  string
	Day         string // YYYY-MM-DD, a local date
	Description string
}

// maxDescription bounds what a closed day's description may hold: it is a label
// shown in lists, not a notice.
const maxDescription = 200

// listClosedDays returns the closed days on or after fromDay (YYYY-MM-DD), soonest
// first: the administrator's list of what is coming up.
func listClosedDays(tx *db.Tx, fromDay string) ([]ClosedDay, error) {
	rows, err := tx.Query(`SELECT d.id, coalesce(d.branch_id, 0), coalesce(b.name, ''), d.day, d.description
		FROM closed_days d LEFT JOIN branches b ON b.id = d.branch_id
		WHERE d.day >= ?
		ORDER BY d.day, coalesce(b.name, ''), d.id`, fromDay)
	if err != nil {
		return nil, fmt.Errorf("list closed days: %w", err)
	}
	defer rows.Close()
	var ds []ClosedDay
	for rows.Next() {
		var d ClosedDay
		if err := rows.Scan(&d.ID, &d.BranchID, &d.BranchName, &d.Day, &d.Description); err != nil {
			return nil, fmt.Errorf("list closed days: %w", err)
		}
		ds = append(ds, d)
	}
	return ds, rows.Err()
}

// findClosedDay returns one closed day by id.
func findClosedDay(tx *db.Tx, id int64) (ClosedDay, error) {
	var d ClosedDay
	err := tx.QueryRow(`SELECT d.id, coalesce(d.branch_id, 0), coalesce(b.name, ''), d.day, d.description
		FROM closed_days d LEFT JOIN branches b ON b.id = d.branch_id
		WHERE d.id = ?`, id).Scan(&d.ID, &d.BranchID, &d.BranchName, &d.Day, &d.Description)
	if errors.Is(err, sql.ErrNoRows) {
		return ClosedDay{}, stacks.Errorf(stacks.ENOTFOUND, "There is no closed day %d; it may have been deleted already.", id)
	} else if err != nil {
		return ClosedDay{}, fmt.Errorf("find closed day %d: %w", id, err)
	}
	return d, nil
}

// branchName returns the name of branch id, or a "no such branch" error on field.
func branchName(tx *db.Tx, id int64, field string) (string, error) {
	var name string
	err := tx.QueryRow(`SELECT name FROM branches WHERE id = ?`, id).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", stacks.FieldErrorf(field, stacks.EINVALID, "There is no branch with id %d; choose a branch from the list.", id)
	} else if err != nil {
		return "", fmt.Errorf("find branch %d: %w", id, err)
	}
	return name, nil
}

// ParseDay checks that s is a calendar date written YYYY-MM-DD, the only form the
// database stores (so that days sort and compare as text).
func ParseDay(s string) (time.Time, error) {
	t, err := time.Parse(db.DayFormat, s)
	if err != nil || t.Format(db.DayFormat) != s {
		return time.Time{}, stacks.FieldErrorf("day", stacks.EINVALID, "%q is not a date; enter it as YYYY-MM-DD, for example 2026-12-25.", s)
	}
	return t, nil
}

// addClosedDay closes one branch (branchID > 0) or every branch (0) on day. A day
// already closed for the same branches is refused as a conflict, and so is a
// branch closure on a day every branch is already closed.
func addClosedDay(tx *db.Tx, actor stacks.Actor, branchID int64, day, description string) (ClosedDay, error) {
	day = strings.TrimSpace(day)
	description = strings.TrimSpace(description)
	if day == "" {
		return ClosedDay{}, stacks.FieldErrorf("day", stacks.EINVALID, "Enter the date the library is closed.")
	}
	if _, err := ParseDay(day); err != nil {
		return ClosedDay{}, err
	}
	if !utf8.ValidString(description) || utf8.RuneCountInString(description) > maxDescription || strings.ContainsFunc(description, unicode.IsControl) {
		return ClosedDay{}, stacks.FieldErrorf("description", stacks.EINVALID, "Describe the day on one line, in at most %d characters, or leave the field empty.", maxDescription)
	}
	if branchID < 0 {
		return ClosedDay{}, stacks.FieldErrorf("branch_id", stacks.EINVALID, "Choose a branch from the list, or All branches.")
	}

	d := ClosedDay{BranchID: branchID, Day: day, Description: description}
	var branch sql.NullInt64
	if branchID != 0 {
		name, err := branchName(tx, branchID, "branch_id")
		if err != nil {
			return ClosedDay{}, err
		}
		d.BranchName = name
		branch = sql.NullInt64{Int64: branchID, Valid: true}

		var all int
		if err := tx.QueryRow(`SELECT count(*) FROM closed_days WHERE branch_id IS NULL AND day = ?`, day).Scan(&all); err != nil {
			return ClosedDay{}, fmt.Errorf("add closed day: %w", err)
		}
		if all > 0 {
			return ClosedDay{}, stacks.FieldErrorf("day", stacks.ECONFLICT, "All branches are already closed on %s.", day)
		}
	}

	err := tx.QueryRow(`INSERT INTO closed_days (branch_id, day, description) VALUES (?, ?, ?) RETURNING id`, branch, day, description).Scan(&d.ID)
	if db.IsUniqueViolation(err) {
		if branchID == 0 {
			return ClosedDay{}, stacks.FieldErrorf("day", stacks.ECONFLICT, "All branches are already closed on %s.", day)
		}
		return ClosedDay{}, stacks.FieldErrorf("day", stacks.ECONFLICT, "%s is already closed on %s.", d.BranchName, day)
	} else if err != nil {
		return ClosedDay{}, fmt.Errorf("add closed day: %w", err)
	}
	if err := tx.Audit(actor, "calendar.add", "closed_day", d.ID, d.describe()); err != nil {
		return ClosedDay{}, err
	}
	return d, nil
}

// describe is the audit log's account of a closed day.
func (d ClosedDay) describe() string {
	where := "all branches"
	if d.BranchID != 0 {
		where = d.BranchName
	}
	s := d.Day + " " + where
	if d.Description != "" {
		s += ": " + d.Description
	}
	return s
}

// deleteClosedDay reopens the day: the closed day with the given id is removed.
func deleteClosedDay(tx *db.Tx, actor stacks.Actor, id int64) error {
	d, err := findClosedDay(tx, id)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM closed_days WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete closed day %d: %w", id, err)
	}
	return tx.Audit(actor, "calendar.delete", "closed_day", id, d.describe())
}

// ParseClosingTime checks a local closing time written HH:MM, 00:00 to 23:59.
func ParseClosingTime(s string) (hour, minute int, err error) {
	bad := stacks.FieldErrorf("closes_at", stacks.EINVALID, "%q is not a time; enter the closing time as HH:MM, for example 20:00.", s)
	if len(s) != 5 || s[2] != ':' {
		return 0, 0, bad
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, 0, bad
		}
	}
	hour = int(s[0]-'0')*10 + int(s[1]-'0')
	minute = int(s[3]-'0')*10 + int(s[4]-'0')
	if hour > 23 || minute > 59 {
		return 0, 0, bad
	}
	return hour, minute, nil
}

// setBranchHours sets the weekdays a branch is always closed and its closing time,
// at which day loans fall due. A branch must open on at least one weekday, or no
// loan could ever fall due there.
func setBranchHours(tx *db.Tx, actor stacks.Actor, branchID int64, closedWeekdays []time.Weekday, closesAt string) error {
	closesAt = strings.TrimSpace(closesAt)
	if _, _, err := ParseClosingTime(closesAt); err != nil {
		return err
	}
	days := make([]time.Weekday, 0, len(closedWeekdays))
	for _, d := range closedWeekdays {
		if d < time.Sunday || d > time.Saturday {
			return stacks.FieldErrorf("closed_weekdays", stacks.EINVALID, "Weekdays run from Sunday to Saturday.")
		}
		if !slices.Contains(days, d) {
			days = append(days, d)
		}
	}
	slices.Sort(days)
	if len(days) == 7 {
		return stacks.FieldErrorf("closed_weekdays", stacks.EINVALID, "A branch must open on at least one day of the week; for a longer closure add closed days instead.")
	}
	name, err := branchName(tx, branchID, "branch_id")
	if stacks.ErrorCode(err) == stacks.EINVALID {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no branch with id %d.", branchID)
	} else if err != nil {
		return err
	}
	wd := FormatWeekdays(days)
	if _, err := tx.Exec(`UPDATE branches SET closed_weekdays = ?, closes_at = ? WHERE id = ?`, wd, closesAt, branchID); err != nil {
		return fmt.Errorf("set branch hours: %w", err)
	}
	names := make([]string, len(days))
	for i, d := range days {
		names[i] = d.String()
	}
	detail := fmt.Sprintf("%s: closed %s; closes at %s", name, strings.Join(names, ", "), closesAt)
	if len(days) == 0 {
		detail = fmt.Sprintf("%s: open every day; closes at %s", name, closesAt)
	}
	return tx.Audit(actor, "calendar.hours", "branch", branchID, detail)
}

// Named is an id with its code and name: an entry of a list to choose from.
type Named struct {
	ID   int64
	Code string
	Name string
}

// ListScopes returns the patron categories and item types, by name: what a
// circulation rule may be scoped to. (They belong to the patrons and catalogue
// packages; the rule form only needs their names, in one place.)
func ListScopes(tx *db.Tx) (categories, itemTypes []Named, err error) {
	rows, err := tx.Query(`SELECT 'c', id, code, name FROM patron_categories
		UNION ALL SELECT 'i', id, code, name FROM item_types
		ORDER BY 1, 4, 3`)
	if err != nil {
		return nil, nil, fmt.Errorf("list categories and item types: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var n Named
		if err := rows.Scan(&kind, &n.ID, &n.Code, &n.Name); err != nil {
			return nil, nil, fmt.Errorf("list categories and item types: %w", err)
		}
		if kind == "c" {
			categories = append(categories, n)
		} else {
			itemTypes = append(itemTypes, n)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("list categories and item types: %w", err)
	}
	return categories, itemTypes, nil
}
