package library_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/library"
)

var admin = stacks.Actor{Name: "admin"}

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// mustOpenDB opens a migrated database with two branches: Central (1) and East (2).
func mustOpenDB(tb testing.TB) *db.DB {
	tb.Helper()
	d := dbtest.OpenAt(tb, dbtest.Monday, db.Options{})
	ctx := context.Background()
	err := d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO branches (id, code, name) VALUES (1, 'CEN', 'Central'), (2, 'EAS', 'East')`)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func addDay(t *testing.T, d *db.DB, branch int64, day, desc string) (library.ClosedDay, error) {
	t.Helper()
	return library.NewService(d, nil).AddClosedDay(context.Background(), admin, branch, day, desc)
}

func listDays(t *testing.T, d *db.DB, from string) []library.ClosedDay {
	t.Helper()
	var ds []library.ClosedDay
	c, err := library.NewService(d, nil).Calendar(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, cd := range c.ClosedDays {
		if cd.Day >= from {
			ds = append(ds, cd)
		}
	}
	return ds
}

func auditCount(t *testing.T, d *db.DB, action string) int {
	t.Helper()
	var n int
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM audit_log WHERE action = ?`, action).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestClosedDays(t *testing.T) {
	d := mustOpenDB(t)
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		xmas, err := addDay(t, d, 0, "2026-12-25", " Christmas Day ")
		if err != nil {
			t.Fatal(err)
		}
		if xmas.ID == 0 || xmas.Description != "Christmas Day" || xmas.BranchID != 0 {
			t.Fatalf("added %+v", xmas)
		}
		if _, err := addDay(t, d, 2, "2026-12-24", "Stocktaking"); err != nil {
			t.Fatal(err)
		}
		if _, err := addDay(t, d, 1, "2026-01-01", "Past"); err != nil {
			t.Fatal(err)
		}
		ds := listDays(t, d, "2026-11-30")
		if len(ds) != 2 {
			t.Fatalf("listed %d closed days from 2026-11-30, want 2 (the past one left out): %+v", len(ds), ds)
		}
		if ds[0].Day != "2026-12-24" || ds[0].BranchName != "East" || ds[1].Day != "2026-12-25" || ds[1].BranchName != "" {
			t.Fatalf("listed %+v, want East on the 24th then all branches on the 25th", ds)
		}
		if n := auditCount(t, d, "calendar.add"); n != 3 {
			t.Fatalf("%d calendar.add audit entries, want 3", n)
		}
	})

	t.Run("ErrDuplicate", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			branch int64
			day    string
		}{
			{"SameBranch", 2, "2026-12-24"},
			{"AllBranches", 0, "2026-12-25"},
			{"BranchOnDayAllClosed", 1, "2026-12-25"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := addDay(t, d, tc.branch, tc.day, "again")
				if stacks.ErrorCode(err) != stacks.ECONFLICT || stacks.ErrorField(err) != "day" {
					t.Fatalf("duplicate closed day: %v, want a conflict on the day field", err)
				}
				if msg := stacks.ErrorMessage(err); !strings.Contains(msg, "already closed") {
					t.Fatalf("message %q does not say the day is already closed", msg)
				}
			})
		}
	})

	t.Run("ErrBadDate", func(t *testing.T) {
		for _, day := range []string{"", "2026-13-01", "2026-02-30", "25/12/2026", "2026-1-5", "2026-12-25T00:00", " 2026-12-2"} {
			_, err := addDay(t, d, 0, day, "")
			if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != "day" {
				t.Errorf("date %q: %v, want invalid on the day field", day, err)
			}
		}
	})

	t.Run("ErrUnknownBranch", func(t *testing.T) {
		_, err := addDay(t, d, 99, "2026-12-31", "")
		if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != "branch_id" {
			t.Fatalf("unknown branch: %v, want invalid on branch_id", err)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		ds := listDays(t, d, "2026-12-25")
		if len(ds) != 1 {
			t.Fatalf("want one closed day on 2026-12-25, got %+v", ds)
		}
		if err := library.NewService(d, nil).DeleteClosedDay(ctx, admin, ds[0].ID); err != nil {
			t.Fatal(err)
		}
		if ds := listDays(t, d, "2026-12-25"); len(ds) != 0 {
			t.Fatalf("still listed after delete: %+v", ds)
		}
		if n := auditCount(t, d, "calendar.delete"); n != 1 {
			t.Fatalf("%d calendar.delete audit entries, want 1", n)
		}
		err := library.NewService(d, nil).DeleteClosedDay(ctx, admin, ds[0].ID)
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("second delete: %v, want not found", err)
		}
		// The day can be closed again once reopened.
		if _, err := addDay(t, d, 0, "2026-12-25", "Christmas Day"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSetBranchHours(t *testing.T) {
	d := mustOpenDB(t)
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		_, err := library.NewService(d, nil).SetBranchHours(ctx, admin, 1, []time.Weekday{time.Monday, time.Sunday, time.Monday}, "17:30")
		if err != nil {
			t.Fatal(err)
		}
		var cal *library.Calendar
		mon := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // a Monday
		err = d.Read(ctx, func(tx *db.Tx) error {
			var err error
			cal, err = library.LoadCalendar(tx, 1, time.UTC, mon, mon.AddDate(0, 0, 14))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if cal.IsOpen(mon) || cal.IsOpen(mon.AddDate(0, 0, -1)) {
			t.Error("Central is open on Sunday or Monday after closing them")
		}
		if !cal.IsOpen(mon.AddDate(0, 0, 1)) {
			t.Error("Central is closed on Tuesday")
		}
		if cal.Branch.ClosesAt != "17:30" {
			t.Errorf("closes at %q, want 17:30", cal.Branch.ClosesAt)
		}
		// A day loan issued on Friday for 3 days falls due Monday -> Tuesday, 17:30.
		fri := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
		if due := cal.DueAt(fri, 3, "days"); !due.Equal(time.Date(2026, 12, 1, 17, 30, 0, 0, time.UTC)) {
			t.Errorf("due %v, want Tuesday 2026-12-01 17:30", due)
		}
		if n := auditCount(t, d, "calendar.hours"); n != 1 {
			t.Errorf("%d calendar.hours audit entries, want 1", n)
		}
	})

	t.Run("OpenEveryDay", func(t *testing.T) {
		if _, err := library.NewService(d, nil).SetBranchHours(ctx, admin, 2, nil, "00:00"); err != nil {
			t.Fatal(err)
		}
	})

	for _, tc := range []struct {
		name     string
		branch   int64
		weekdays []time.Weekday
		closesAt string
		code     string
		field    string
	}{
		{"ErrTimeFormat", 1, nil, "8pm", stacks.EINVALID, "closes_at"},
		{"ErrHour", 1, nil, "24:00", stacks.EINVALID, "closes_at"},
		{"ErrMinute", 1, nil, "20:60", stacks.EINVALID, "closes_at"},
		{"ErrShort", 1, nil, "9:00", stacks.EINVALID, "closes_at"},
		{"ErrWeekday", 1, []time.Weekday{7}, "20:00", stacks.EINVALID, "closed_weekdays"},
		{"ErrNeverOpen", 1, []time.Weekday{0, 1, 2, 3, 4, 5, 6}, "20:00", stacks.EINVALID, "closed_weekdays"},
		{"ErrUnknownBranch", 99, nil, "20:00", stacks.ENOTFOUND, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := library.NewService(d, nil).SetBranchHours(ctx, admin, tc.branch, tc.weekdays, tc.closesAt)
			if stacks.ErrorCode(err) != tc.code || stacks.ErrorField(err) != tc.field {
				t.Fatalf("got %v (field %q), want %s on %q", err, stacks.ErrorField(err), tc.code, tc.field)
			}
		})
	}
}

func TestListScopes(t *testing.T) {
	d := mustOpenDB(t)
	ctx := context.Background()
	err := d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`INSERT INTO patron_categories (code, name) VALUES ('CHILD', 'Child'), ('ADULT', 'Adult')`); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO item_types (code, name) VALUES ('DVD', 'DVD'), ('BOOK', 'Book')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var cats, types []library.Named
	err = d.Read(ctx, func(tx *db.Tx) error {
		var err error
		cats, types, err = library.ListScopes(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 2 || cats[0].Name != "Adult" || cats[1].Code != "CHILD" {
		t.Errorf("categories %+v, want Adult then Child", cats)
	}
	if len(types) != 2 || types[0].Name != "Book" || types[1].Name != "DVD" || types[0].ID == 0 {
		t.Errorf("item types %+v, want Book then DVD", types)
	}
}
