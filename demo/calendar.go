package demo

import (
	"fmt"
	"strings"
	"time"
)

// closedDay is one row of closed_days; branch 0 closes every branch.
type closedDay struct {
	branch      int64
	day         time.Time
	description string
}

// calendar knows when each branch is open, so that generated loans are issued and
// returned on open days and fall due on one. The circulation package owns the real
// due-date rule; this is the same rule in small: a due day that falls on a closed
// day moves to the next open day.
type calendar struct {
	closedWeekdays map[int64]string // branch id → weekday digits, 0 = Sunday
	closed         map[string]bool  // "branch|YYYY-MM-DD", branch 0 = all
	days           []closedDay
}

// newCalendar returns the demo calendar around today: Sundays closed everywhere;
// New Year's Day, Christmas Day and Boxing Day of last year, this year and next
// year at every branch; and one staff training day at Westside, the first Wednesday
// of next month.
func newCalendar(today time.Time, branchIDs []int64) *calendar {
	c := &calendar{closedWeekdays: map[int64]string{}, closed: map[string]bool{}}
	for _, id := range branchIDs {
		c.closedWeekdays[id] = "0"
	}
	for y := today.Year() - 1; y <= today.Year()+1; y++ {
		c.add(0, date(y, time.January, 1), "New Year's Day")
		c.add(0, date(y, time.December, 25), "Christmas Day")
		c.add(0, date(y, time.December, 26), "Boxing Day")
	}
	training := date(today.Year(), today.Month()+1, 1)
	for training.Weekday() != time.Wednesday {
		training = training.AddDate(0, 0, 1)
	}
	c.add(branchWES, c.nextOpen(branchWES, training), "Staff training day")
	return c
}

func (c *calendar) add(branch int64, day time.Time, description string) {
	c.closed[closedKey(branch, day)] = true
	c.days = append(c.days, closedDay{branch: branch, day: day, description: description})
}

func closedKey(branch int64, day time.Time) string {
	return fmt.Sprintf("%d|%s", branch, day.Format("2006-01-02"))
}

// open reports whether branch is open on day.
func (c *calendar) open(branch int64, day time.Time) bool {
	if strings.ContainsRune(c.closedWeekdays[branch], rune('0'+int(day.Weekday()))) {
		return false
	}
	return !c.closed[closedKey(0, day)] && !c.closed[closedKey(branch, day)]
}

// nextOpen returns day if branch is open then, else the next day it is.
func (c *calendar) nextOpen(branch int64, day time.Time) time.Time {
	for !c.open(branch, day) {
		day = day.AddDate(0, 0, 1)
	}
	return day
}

// prevOpen returns day if branch is open then, else the last day before it that is.
func (c *calendar) prevOpen(branch int64, day time.Time) time.Time {
	for !c.open(branch, day) {
		day = day.AddDate(0, 0, -1)
	}
	return day
}

// dueDay is the day a day loan issued on issue for period days falls due at branch.
func (c *calendar) dueDay(branch int64, issue time.Time, period int) time.Time {
	return c.nextOpen(branch, issue.AddDate(0, 0, period))
}

// closesAt is the branches' closing time, when day loans fall due (in UTC, the demo
// library's time zone).
const closesAt = 20 * time.Hour

// closing returns the instant branch closes on day.
func closing(day time.Time) time.Time { return day.Add(closesAt) }

// date returns midnight UTC of a calendar day; months out of range wrap into the
// next year, as time.Date does.
func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// dayOf returns midnight UTC of t's day.
func dayOf(t time.Time) time.Time {
	t = t.UTC()
	return date(t.Year(), t.Month(), t.Day())
}

// daysBetween returns the number of days from a to b, both midnights.
func daysBetween(a, b time.Time) int { return int(b.Sub(a) / (24 * time.Hour)) }
