package library_test

import (
	"context"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// central is the demo's Central branch: closed on Sundays, closing at 20:00.
var central = library.Branch{ID: 1, Code: "CEN", Name: "Central", ClosedWeekdays: []time.Weekday{time.Sunday}, ClosesAt: "20:00"}

// holidays are the demo's holidays around the end of 2026.
var holidays = map[string]string{
	"2026-12-25": "Christmas Day",
	"2026-12-26": "Boxing Day",
	"2027-01-01": "New Year's Day",
}

func mustLoadLocation(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Skipf("time zone %s: %v", name, err)
	}
	return loc
}

// utc parses "2006-01-02 15:04" as a UTC instant.
func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

// local parses "2006-01-02 15:04" in loc.
func local(s string, loc *time.Location) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		panic(err)
	}
	return t
}

func TestDueAt(t *testing.T) {
	ny := mustLoadLocation(t, "America/New_York")
	tests := []struct {
		name   string
		loc    *time.Location
		issued time.Time
		period int
		unit   string
		want   time.Time
	}{
		// Day loans: at closing (20:00 local) on the day, or the next open day.
		{"DaysOpenDay", time.UTC, utc("2026-11-30 10:00"), 21, "days", utc("2026-12-21 20:00")},
		{"DaysSundayMovesToMonday", time.UTC, utc("2026-11-30 10:00"), 6, "days", utc("2026-12-07 20:00")},
		{"DaysSaturdayStays", time.UTC, utc("2026-11-30 10:00"), 5, "days", utc("2026-12-05 20:00")},
		{"DaysChristmasBoxingDaySunday", time.UTC, utc("2026-12-04 10:00"), 21, "days", utc("2026-12-28 20:00")},
		{"DaysBoxingDayThenSunday", time.UTC, utc("2026-12-05 10:00"), 21, "days", utc("2026-12-28 20:00")},
		{"DaysYearEndHoliday", time.UTC, utc("2026-12-11 10:00"), 21, "days", utc("2027-01-02 20:00")},
		{"DaysAcrossYearEnd", time.UTC, utc("2026-12-21 10:00"), 21, "days", utc("2027-01-11 20:00")},
		{"DaysIssuedAfterClosing", time.UTC, utc("2026-11-30 21:30"), 21, "days", utc("2026-12-21 20:00")},
		{"DaysIssuedJustAfterMidnight", time.UTC, utc("2026-12-01 00:05"), 1, "days", utc("2026-12-02 20:00")},
		{"DaysZero", time.UTC, utc("2026-11-30 10:00"), 0, "days", utc("2026-11-30 20:00")},
		{"DaysZeroOnSunday", time.UTC, utc("2026-12-06 10:00"), 0, "days", utc("2026-12-07 20:00")},
		{"DaysLongLoan", time.UTC, utc("2026-11-30 10:00"), 365, "days", utc("2027-11-30 20:00")},

		// Hour loans: the period, clamped at closing on the day of issue.
		{"HoursWithinDay", time.UTC, utc("2026-11-30 10:00"), 4, "hours", utc("2026-11-30 14:00")},
		{"HoursEndAtClosing", time.UTC, utc("2026-11-30 16:00"), 4, "hours", utc("2026-11-30 20:00")},
		{"HoursClampedAtClosing", time.UTC, utc("2026-11-30 18:00"), 4, "hours", utc("2026-11-30 20:00")},
		{"HoursLongClampedAtClosing", time.UTC, utc("2026-11-30 10:00"), 48, "hours", utc("2026-11-30 20:00")},
		{"HoursIssuedAfterClosing", time.UTC, utc("2026-11-30 21:00"), 4, "hours", utc("2026-12-01 01:00")},
		{"HoursIssuedAtClosing", time.UTC, utc("2026-11-30 20:00"), 2, "hours", utc("2026-11-30 22:00")},

		// A library in New York: days and closing are local, stored instants UTC.
		{"NewYorkDays", ny, local("2026-11-30 10:00", ny), 21, "days", utc("2026-12-22 01:00")},
		// Monday 22:00 local is already Tuesday in UTC: the loan runs from Monday.
		{"NewYorkLocalDateNotUTCDate", ny, utc("2026-12-01 03:00"), 1, "days", utc("2026-12-02 01:00")},
		// Monday 22:00 local plus 6 days is Sunday: closed, so Monday.
		{"NewYorkSundayLocal", ny, utc("2026-12-01 03:00"), 6, "days", utc("2026-12-08 01:00")},
		// Across the end of daylight saving time (1 November 2026): 20:00 EST.
		{"NewYorkAcrossDSTEnd", ny, local("2026-10-26 10:00", ny), 21, "days", utc("2026-11-17 01:00")},
		// Across its start (14 March 2027): 20:00 EDT.
		{"NewYorkAcrossDSTStart", ny, local("2027-03-01 10:00", ny), 21, "days", utc("2027-03-23 00:00")},
		{"NewYorkChristmas", ny, local("2026-12-04 10:00", ny), 21, "days", utc("2026-12-29 01:00")},
		{"NewYorkHoursClamped", ny, local("2026-11-30 18:30", ny), 4, "hours", utc("2026-12-01 01:00")},
		{"NewYorkHoursWithinDay", ny, local("2026-11-30 10:00", ny), 3, "hours", utc("2026-11-30 18:00")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := library.NewCalendar(central, tt.loc, holidays)
			got := c.DueAt(tt.issued, tt.period, tt.unit)
			if !got.Equal(tt.want) {
				t.Errorf("DueAt(%s, %d %s) = %s, want %s", tt.issued.UTC().Format(time.RFC3339), tt.period, tt.unit,
					got.Format(time.RFC3339), tt.want.Format(time.RFC3339))
			}
			if got.Location() != time.UTC {
				t.Errorf("DueAt returned %s in %s, want UTC (it is stored)", got, got.Location())
			}
			if tt.unit == "days" && !c.IsOpen(got) {
				t.Errorf("DueAt = %s, a day the branch is closed", got)
			}
		})
	}
}

func TestDueAtClosingTime(t *testing.T) {
	b := central
	b.ClosesAt = "17:30"
	c := library.NewCalendar(b, time.UTC, nil)
	if got, want := c.DueAt(utc("2026-11-30 10:00"), 1, "days"), utc("2026-12-01 17:30"); !got.Equal(want) {
		t.Errorf("day loan due %s, want %s", got, want)
	}
	if got, want := c.DueAt(utc("2026-11-30 16:00"), 4, "hours"), utc("2026-11-30 17:30"); !got.Equal(want) {
		t.Errorf("hour loan due %s, want %s", got, want)
	}

	t.Run("UnreadableClosingIs2000", func(t *testing.T) {
		b := central
		b.ClosesAt = "late"
		c := library.NewCalendar(b, time.UTC, nil)
		if got, want := c.DueAt(utc("2026-11-30 10:00"), 1, "days"), utc("2026-12-01 20:00"); !got.Equal(want) {
			t.Errorf("due %s, want %s", got, want)
		}
	})
}

func TestLateUnits(t *testing.T) {
	ny := mustLoadLocation(t, "America/New_York")
	tests := []struct {
		name     string
		loc      *time.Location
		due      time.Time
		returned time.Time
		unit     string
		want     int
	}{
		{"Early", time.UTC, utc("2026-12-21 20:00"), utc("2026-12-10 12:00"), "days", 0},
		{"AtDue", time.UTC, utc("2026-12-21 20:00"), utc("2026-12-21 20:00"), "days", 0},
		{"SameDayAfterClosing", time.UTC, utc("2026-12-21 20:00"), utc("2026-12-21 23:59"), "days", 0},
		{"NextDay", time.UTC, utc("2026-12-21 20:00"), utc("2026-12-22 09:00"), "days", 1},
		{"ThreeOpenDays", time.UTC, utc("2026-12-14 20:00"), utc("2026-12-17 12:00"), "days", 3},
		{"SundayNotCounted", time.UTC, utc("2026-12-05 20:00"), utc("2026-12-07 10:00"), "days", 1},
		{"ReturnedOnSunday", time.UTC, utc("2026-12-05 20:00"), utc("2026-12-06 10:00"), "days", 0},
		{"WeekWithSunday", time.UTC, utc("2026-11-30 20:00"), utc("2026-12-07 10:00"), "days", 6},
		{"HolidaysNotCounted", time.UTC, utc("2026-12-24 20:00"), utc("2026-12-28 10:00"), "days", 1},
		{"AcrossYearEnd", time.UTC, utc("2026-12-30 20:00"), utc("2027-01-04 10:00"), "days", 3},
		// Beyond the loaded range only weekly closures count; here they all are loaded.
		{"LongOverdue", time.UTC, utc("2026-11-30 20:00"), utc("2027-01-30 10:00"), "days", 50},

		{"HoursEarly", time.UTC, utc("2026-11-30 14:00"), utc("2026-11-30 13:00"), "hours", 0},
		{"HoursAtDue", time.UTC, utc("2026-11-30 14:00"), utc("2026-11-30 14:00"), "hours", 0},
		{"HoursOneSecondRoundsUp", time.UTC, utc("2026-11-30 14:00"), utc("2026-11-30 14:00").Add(time.Second), "hours", 1},
		{"HoursExact", time.UTC, utc("2026-11-30 14:00"), utc("2026-11-30 16:00"), "hours", 2},
		{"HoursPartRoundsUp", time.UTC, utc("2026-11-30 14:00"), utc("2026-11-30 16:30"), "hours", 3},
		{"HoursOvernight", time.UTC, utc("2026-11-30 20:00"), utc("2026-12-01 10:00"), "hours", 14},

		// Local days: 22:00 in New York the day it was due is still that day.
		{"NewYorkSameLocalDay", ny, utc("2026-12-22 01:00"), utc("2026-12-22 03:00"), "days", 0},
		{"NewYorkNextLocalDay", ny, utc("2026-12-22 01:00"), utc("2026-12-22 15:00"), "days", 1},
		// Due Saturday 20:00 local, returned Monday morning local: Sunday is free.
		{"NewYorkSunday", ny, utc("2026-12-06 01:00"), utc("2026-12-07 15:00"), "days", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := library.NewCalendar(central, tt.loc, holidays)
			if got := c.LateUnits(tt.due, tt.returned, tt.unit); got != tt.want {
				t.Errorf("LateUnits(due %s, returned %s, %s) = %d, want %d", tt.due.Format(time.RFC3339),
					tt.returned.Format(time.RFC3339), tt.unit, got, tt.want)
			}
		})
	}
}

func TestNextOpenDay(t *testing.T) {
	ny := mustLoadLocation(t, "America/New_York")
	tests := []struct {
		name string
		b    library.Branch
		loc  *time.Location
		t    time.Time
		want time.Time
	}{
		{"OpenDayIsItself", central, time.UTC, utc("2026-12-05 15:00"), utc("2026-12-05 00:00")},
		{"SundayToMonday", central, time.UTC, utc("2026-12-06 15:00"), utc("2026-12-07 00:00")},
		{"ChristmasToMonday", central, time.UTC, utc("2026-12-25 09:00"), utc("2026-12-28 00:00")},
		{"NewYearToSaturday", central, time.UTC, utc("2027-01-01 09:00"), utc("2027-01-02 00:00")},
		{"NewYearsEveOpen", central, time.UTC, utc("2026-12-31 23:59"), utc("2026-12-31 00:00")},
		// Sunday 22:00 in New York is Monday in UTC, but the local day is Sunday.
		{"NewYorkSundayEvening", central, ny, utc("2026-12-07 03:00"), local("2026-12-07 00:00", ny)},
		{"NewYorkChristmasEve", central, ny, utc("2026-12-25 03:00"), local("2026-12-24 00:00", ny)},
		{"NeverOpen", library.Branch{ClosedWeekdays: []time.Weekday{0, 1, 2, 3, 4, 5, 6}, ClosesAt: "20:00"}, time.UTC,
			utc("2026-12-02 12:00"), utc("2026-12-02 00:00")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := library.NewCalendar(tt.b, tt.loc, holidays)
			if got := c.NextOpenDay(tt.t); !got.Equal(tt.want) {
				t.Errorf("NextOpenDay(%s) = %s, want %s", tt.t.Format(time.RFC3339), got, tt.want)
			}
		})
	}
}

func TestIsOpen(t *testing.T) {
	ny := mustLoadLocation(t, "America/New_York")
	twoDays := library.Branch{ID: 2, ClosedWeekdays: []time.Weekday{time.Saturday, time.Sunday}, ClosesAt: "18:00"}
	tests := []struct {
		name string
		b    library.Branch
		loc  *time.Location
		t    time.Time
		want bool
	}{
		{"Monday", central, time.UTC, utc("2026-11-30 10:00"), true},
		{"Saturday", central, time.UTC, utc("2026-12-05 10:00"), true},
		{"Sunday", central, time.UTC, utc("2026-12-06 10:00"), false},
		{"ChristmasDay", central, time.UTC, utc("2026-12-25 10:00"), false},
		{"BoxingDay", central, time.UTC, utc("2026-12-26 23:59"), false},
		{"NewYearsDay", central, time.UTC, utc("2027-01-01 00:00"), false},
		{"NewYearsEve", central, time.UTC, utc("2026-12-31 23:59"), true},
		{"WeekendBranchSaturday", twoDays, time.UTC, utc("2026-12-05 10:00"), false},
		{"WeekendBranchFriday", twoDays, time.UTC, utc("2026-12-04 10:00"), true},
		// 2026-12-25 02:00 UTC is Christmas Eve evening in New York.
		{"NewYorkChristmasEveEvening", central, ny, utc("2026-12-25 02:00"), true},
		{"NewYorkChristmasDay", central, ny, utc("2026-12-26 02:00"), false},
		// 2026-12-07 03:00 UTC is Sunday evening in New York.
		{"NewYorkSundayEvening", central, ny, utc("2026-12-07 03:00"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := library.NewCalendar(tt.b, tt.loc, holidays)
			if got := c.IsOpen(tt.t); got != tt.want {
				t.Errorf("IsOpen(%s) = %v, want %v", tt.t.Format(time.RFC3339), got, tt.want)
			}
		})
	}
}

func TestNewCalendarCopiesClosedDays(t *testing.T) {
	days := map[string]string{"2026-12-02": "Training"}
	c := library.NewCalendar(central, nil, days)
	delete(days, "2026-12-02")
	if c.IsOpen(utc("2026-12-02 10:00")) {
		t.Error("the calendar shares the caller's map: deleting from it reopened the day")
	}
	if c.Location != time.UTC {
		t.Errorf("Location = %v, want UTC for nil", c.Location)
	}
}

func TestLoadCalendar(t *testing.T) {
	d := mustOpenDB(t)
	ctx := context.Background()
	err := d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE branches SET closed_weekdays = '06', closes_at = '17:30' WHERE id = 2`)
		if err != nil {
			return err
		}
		_, err = tx.Exec(`INSERT INTO closed_days (branch_id, day, description) VALUES
			(NULL, '2026-12-25', 'Christmas Day'),
			(2, '2026-12-24', 'East stocktaking'),
			(1, '2026-12-31', 'Central inventory'),
			(NULL, '2027-03-01', 'Far away')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	load := func(t *testing.T, branchID int64, loc *time.Location) *library.Calendar {
		t.Helper()
		var c *library.Calendar
		err := d.Read(ctx, func(tx *db.Tx) error {
			var err error
			c, err = library.LoadCalendar(tx, branchID, loc, utc("2026-12-01 00:00"), utc("2027-01-31 00:00"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("Central", func(t *testing.T) {
		c := load(t, 1, nil)
		if c.Branch.ID != 1 || c.Branch.Code != "CEN" || c.Branch.Name != "Central" || c.Branch.ClosesAt != "20:00" {
			t.Errorf("Branch = %+v", c.Branch)
		}
		for _, tt := range []struct {
			day  string
			want bool
		}{
			{"2026-12-24", true},  // closed only at East
			{"2026-12-25", false}, // every branch
			{"2026-12-31", false}, // closed only at Central
			{"2026-12-06", false}, // Sunday
			{"2026-12-05", true},  // Saturday
		} {
			if got := c.IsOpen(utc(tt.day + " 12:00")); got != tt.want {
				t.Errorf("Central IsOpen(%s) = %v, want %v", tt.day, got, tt.want)
			}
		}
	})

	t.Run("EastOwnClosedDayAndHours", func(t *testing.T) {
		c := load(t, 2, time.UTC)
		for _, tt := range []struct {
			day  string
			want bool
		}{
			{"2026-12-24", false}, // East only
			{"2026-12-25", false}, // every branch
			{"2026-12-31", true},  // Central only
			{"2026-12-05", false}, // Saturday, closed weekly here
			{"2026-12-06", false}, // Sunday
			{"2026-12-07", true},
		} {
			if got := c.IsOpen(utc(tt.day + " 12:00")); got != tt.want {
				t.Errorf("East IsOpen(%s) = %v, want %v", tt.day, got, tt.want)
			}
		}
		// Friday 18 December plus 6 days is Thursday 24th (closed here), then Christmas,
		// the weekend: Monday 28th at 17:30.
		if got, want := c.DueAt(utc("2026-12-18 10:00"), 6, "days"), utc("2026-12-28 17:30"); !got.Equal(want) {
			t.Errorf("East DueAt = %s, want %s", got, want)
		}
	})

	t.Run("OutsideTheLoadedRangeOnlyWeekly", func(t *testing.T) {
		// The documented limit: a closed day outside from..to is not loaded.
		c := load(t, 1, time.UTC)
		if !c.IsOpen(utc("2027-03-01 12:00")) {
			t.Error("a closed day outside the loaded range was loaded")
		}
	})

	t.Run("LocalDates", func(t *testing.T) {
		// The range's ends are local dates: loading from 2026-12-25 03:00 UTC in New
		// York starts on Christmas Eve and so includes East's closed 24th.
		ny := mustLoadLocation(t, "America/New_York")
		var c *library.Calendar
		err := d.Read(ctx, func(tx *db.Tx) error {
			var err error
			c, err = library.LoadCalendar(tx, 2, ny, utc("2026-12-25 03:00"), utc("2026-12-26 12:00"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.IsOpen(local("2026-12-24 12:00", ny)) {
			t.Error("East's 24 December was not loaded for a range starting on the evening of the 24th in New York")
		}
	})

	t.Run("ErrUnknownBranch", func(t *testing.T) {
		err := d.Read(ctx, func(tx *db.Tx) error {
			_, err := library.LoadCalendar(tx, 99, time.UTC, utc("2026-12-01 00:00"), utc("2026-12-31 00:00"))
			return err
		})
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("err = %v, want not found", err)
		}
	})

	t.Run("OneQuery", func(t *testing.T) {
		sctx, stats := db.WithStats(ctx)
		err := d.Read(sctx, func(tx *db.Tx) error {
			_, err := library.LoadCalendar(tx, 1, time.UTC, utc("2026-12-01 00:00"), utc("2027-01-31 00:00"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := stats.Statements(); n != 1 {
			t.Errorf("LoadCalendar ran %d statements, want 1", n)
		}
	})
}

func TestAddOpenDays(t *testing.T) {
	b := library.Branch{ID: 1, Code: "CEN", Name: "Central", ClosedWeekdays: []time.Weekday{time.Sunday}, ClosesAt: "20:00"}
	cal := library.NewCalendar(b, time.UTC, map[string]string{"2026-12-25": "Christmas", "2026-12-26": "Boxing Day"})
	for _, tc := range []struct {
		from string
		n    int
		want string
	}{
		{"2026-12-01 10:00", 1, "2026-12-02 20:00"},
		{"2026-12-01 10:00", 7, "2026-12-09 20:00"}, // 2-5, (Sunday 6th), 7-9
		{"2026-12-05 21:00", 1, "2026-12-07 20:00"}, // Saturday evening: Sunday closed
		{"2026-12-22 10:00", 3, "2026-12-28 20:00"}, // 23, 24, (25, 26 holidays, 27 Sunday) 28
		{"2026-12-06 10:00", 0, "2026-12-07 20:00"}, // n = 0 on a closed day: next open day
	} {
		from, _ := time.Parse("2006-01-02 15:04", tc.from)
		want, _ := time.Parse("2006-01-02 15:04", tc.want)
		if got := cal.AddOpenDays(from, tc.n); !got.Equal(want) {
			t.Errorf("AddOpenDays(%s, %d) = %s, want %s", tc.from, tc.n, got, want)
		}
	}
}
