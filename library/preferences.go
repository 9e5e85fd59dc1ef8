// Package library owns how the library is organised: its branches, the calendar of
// days they are closed, and the system preferences.
package library

import (
	"context"
	"fmt"
	"strconv"
	"sync"
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

// PreferenceCache keeps preferences in memory in server mode; an administrator's
// change calls Invalidate. Disabled (CGI mode), every Get reads the database.
type PreferenceCache struct {
	enabled bool
	mu      sync.RWMutex
	cached  *Preferences
	// gen counts invalidations, so that a read that started before a change is
	// not cached after it.
	gen uint64
}

// NewPreferenceCache returns a cache; enabled false makes it read through.
func NewPreferenceCache(enabled bool) *PreferenceCache {
	return &PreferenceCache{enabled: enabled}
}

// Get returns the preferences, from memory when cached.
func (c *PreferenceCache) Get(ctx context.Context, d *db.DB) (Preferences, error) {
	var gen uint64
	if c.enabled {
		c.mu.RLock()
		p, g := c.cached, c.gen
		c.mu.RUnlock()
		if p != nil {
			return *p, nil
		}
		gen = g
	}
	var p Preferences
	err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		p, err = LoadPreferences(tx)
		return err
	})
	if err != nil {
		return Preferences{}, err
	}
	if c.enabled {
		c.mu.Lock()
		if c.gen == gen {
			c.cached = &p
		}
		c.mu.Unlock()
	}
	return p, nil
}

// Invalidate drops the cached preferences; the next Get reads them again.
func (c *PreferenceCache) Invalidate() {
	c.mu.Lock()
	c.cached = nil
	c.gen++
	c.mu.Unlock()
}
