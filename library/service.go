package library

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Service runs the library's administration (calendar, preferences) in
// transactions of its own: each method opens one and commits it.
type Service struct {
	DB *db.DB
	// Prefs is the preference cache the servers read; saving the preferences
	// drops it.
	Prefs *PreferenceCache
}

// NewService returns a Service; prefs may be nil (preferences are then read per
// call).
func NewService(d *db.DB, prefs *PreferenceCache) *Service {
	if prefs == nil {
		prefs = NewPreferenceCache(false)
	}
	return &Service{DB: d, Prefs: prefs}
}

// CalendarOverview is what the calendar page shows: every branch (with its
// weekly hours), and the closed days from Today on.
type CalendarOverview struct {
	// Today is the library's local date, YYYY-MM-DD.
	Today      string
	Branches   []Branch
	ClosedDays []ClosedDay
}

// Calendar reads the branches and the closed days to come, in one read
// transaction (after the preferences, for the library's time zone).
func (s *Service) Calendar(ctx context.Context) (CalendarOverview, error) {
	prefs, err := s.Prefs.Get(ctx, s.DB)
	if err != nil {
		return CalendarOverview{}, err
	}
	var c CalendarOverview
	err = s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		c.Today = tx.Now().In(prefs.Location).Format(db.DayFormat)
		if c.Branches, err = ListBranches(tx); err != nil {
			return err
		}
		c.ClosedDays, err = listClosedDays(tx, c.Today)
		return err
	})
	return c, err
}

// SetBranchHours sets a branch's weekly closed days and closing time and
// returns the branch as it was. A branch that does not exist is ENOTFOUND,
// before the hours are checked.
func (s *Service) SetBranchHours(ctx context.Context, actor stacks.Actor, branchID int64, closedWeekdays []time.Weekday, closesAt string) (Branch, error) {
	var b Branch
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		if b, err = findBranch(tx, branchID); err != nil {
			return err
		}
		return setBranchHours(tx, actor, branchID, closedWeekdays, closesAt)
	})
	return b, err
}

// AddClosedDay closes one branch (branchID > 0) or every branch (0) on day.
func (s *Service) AddClosedDay(ctx context.Context, actor stacks.Actor, branchID int64, day, description string) (ClosedDay, error) {
	var d ClosedDay
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		d, err = addClosedDay(tx, actor, branchID, day, description)
		return err
	})
	return d, err
}

// DeleteClosedDay reopens the closed day with the given id.
func (s *Service) DeleteClosedDay(ctx context.Context, actor stacks.Actor, id int64) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return deleteClosedDay(tx, actor, id) })
}

// StoredPreferences reads the preferences as stored, past the cache: the form
// an administrator edits.
func (s *Service) StoredPreferences(ctx context.Context) (Preferences, error) {
	var p Preferences
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		p, err = LoadPreferences(tx)
		return err
	})
	return p, err
}

// PreferencesUpdate is what the preferences form saves, checked by the form.
type PreferencesUpdate struct {
	LibraryName             string
	FinesLimitCents         int64
	TimeZone                string
	DeskIdleMinutes         int
	AnonymiseLoansAfterDays int
	PurgeInactiveAfterYears int
}

// SavePreferences stores the preferences, audited, and drops the cached ones
// so that the next request reads them.
func (s *Service) SavePreferences(ctx context.Context, actor stacks.Actor, u PreferencesUpdate) error {
	err := s.DB.Write(ctx, func(tx *db.Tx) error {
		for _, p := range [][2]string{
			{"library_name", u.LibraryName},
			{"fines_limit_cents", strconv.FormatInt(u.FinesLimitCents, 10)},
			{"timezone", u.TimeZone},
			{"desk_idle_minutes", strconv.Itoa(u.DeskIdleMinutes)},
			{"anonymise_loans_after_days", strconv.Itoa(u.AnonymiseLoansAfterDays)},
			{"purge_inactive_after_years", strconv.Itoa(u.PurgeInactiveAfterYears)},
		} {
			if err := SetPreference(tx, p[0], p[1]); err != nil {
				return err
			}
		}
		return tx.Audit(actor, "preferences.save", "preferences", 0,
			fmt.Sprintf("library_name=%q fines_limit_cents=%d timezone=%q desk_idle_minutes=%d anonymise_loans_after_days=%d purge_inactive_after_years=%d",
				u.LibraryName, u.FinesLimitCents, u.TimeZone, u.DeskIdleMinutes, u.AnonymiseLoansAfterDays, u.PurgeInactiveAfterYears))
	})
	if err != nil {
		return err
	}
	// A change is seen through the version check all the same; dropping the
	// cache here means the server that saved never depends on the trigger alone.
	s.Prefs.Invalidate()
	return nil
}
