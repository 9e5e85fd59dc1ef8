// Package library owns how the library is organised: its branches, the calendar of
// days they are closed, and the system preferences.
package library

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// Preferences are the system preferences an administrator sets.
type Preferences struct {
	LibraryName string
	// FinesLimitCents: a patron owing more than this needs staff confirmation to
	// borrow.
	FinesLimitCents int64
	// Location is the library's time zone: due dates fall at closing time there.
	Location *time.Location
	// DeskIdleMinutes ends a Check out visit after the desk has been idle this long,
	// so the next patron never sees the previous one; 0 never ends it.
	DeskIdleMinutes int
	// AnonymiseLoansAfterDays: a returned loan loses its patron this many days
	// after its return (package privacy); 0 never.
	AnonymiseLoansAfterDays int
	// PurgeInactiveAfterYears: a patron with no activity for this many years, who
	// owes nothing and has nothing out, is deleted (package privacy); 0 never.
	PurgeInactiveAfterYears int
	// Raw holds every preference by name, including ones this type does not name.
	Raw map[string]string
}

// DefaultDeskIdleMinutes and MaxDeskIdleMinutes bound the desk's idle preference.
const (
	DefaultDeskIdleMinutes = 5
	MaxDeskIdleMinutes     = 240

	// MaxAnonymiseLoansAfterDays and MaxPurgeInactiveAfterYears bound the
	// privacy preferences (a hundred years: as good as never, but explicit).
	MaxAnonymiseLoansAfterDays = 36500
	MaxPurgeInactiveAfterYears = 100
)

// LoadPreferences reads every preference in one query.
func LoadPreferences(tx *db.Tx) (Preferences, error) {
	rows, err := tx.Query(`SELECT name, value FROM preferences`)
	if err != nil {
		return Preferences{}, fmt.Errorf("read preferences: %w", err)
	}
	defer rows.Close()
	p := Preferences{LibraryName: "Stacks Library", FinesLimitCents: 500, Location: time.UTC, DeskIdleMinutes: DefaultDeskIdleMinutes, Raw: map[string]string{}}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return Preferences{}, err
		}
		p.Raw[name] = value
		switch name {
		case "library_name":
			p.LibraryName = value
		case "fines_limit_cents":
			if n, err := strconv.ParseInt(value, 10, 64); err == nil {
				p.FinesLimitCents = n
			}
		case "desk_idle_minutes":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 && n <= MaxDeskIdleMinutes {
				p.DeskIdleMinutes = n
			}
		case "anonymise_loans_after_days":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 && n <= MaxAnonymiseLoansAfterDays {
				p.AnonymiseLoansAfterDays = n
			}
		case "purge_inactive_after_years":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 && n <= MaxPurgeInactiveAfterYears {
				p.PurgeInactiveAfterYears = n
			}
		case "timezone":
			if loc, err := time.LoadLocation(value); err == nil {
				p.Location = loc
			}
		}
	}
	return p, rows.Err()
}

// SetPreference stores one preference.
func SetPreference(tx *db.Tx, name, value string) error {
	_, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
	if err != nil {
		return fmt.Errorf("set preference %s: %w", name, err)
	}
	return nil
}

// PreferenceCache keeps preferences in memory in server mode. Several
// processes may serve one database (stacks serve on PostgreSQL, FastCGI
// processes on one SQLite file) and any of them may change a preference, so
// before each use the cache compares the version it holds with the database's
// (db.CacheVersion: a trigger moves it on in the transaction that changes a
// preference). That is one single-row read by primary key, against the whole
// table and its parsing; the preferences are read again only when the version
// moved, so an administrator's change on one server is in the next request on
// every server. Disabled (CGI mode), every Get reads the database.
type PreferenceCache struct {
	cache *db.VersionedCache[struct{}, Preferences] // nil: disabled
}

// NewPreferenceCache returns a cache; enabled false makes it read through.
func NewPreferenceCache(enabled bool) *PreferenceCache {
	if !enabled {
		return &PreferenceCache{}
	}
	return &PreferenceCache{cache: db.NewVersionedCache[struct{}, Preferences](db.CachePreferences, 1)}
}

// Enabled reports whether the cache keeps the preferences (server mode) rather
// than reading them on every Get (CGI mode).
func (c *PreferenceCache) Enabled() bool { return c != nil && c.cache != nil }

// Get returns the preferences, from memory when they are current.
func (c *PreferenceCache) Get(ctx context.Context, d *db.DB) (Preferences, error) {
	if c.cache != nil {
		return c.cache.Get(ctx, d, struct{}{}, LoadPreferences)
	}
	var p Preferences
	err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		p, err = LoadPreferences(tx)
		return err
	})
	return p, err
}

// Invalidate drops the cached preferences; the next Get reads them again. A
// change made through any server is seen without it (the version check); the
// server that made one calls it all the same, so that it never depends on the
// trigger alone.
func (c *PreferenceCache) Invalidate() {
	if c.cache != nil {
		c.cache.Invalidate()
	}
}
