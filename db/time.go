package db

import (
	"database/sql"
	"fmt"
	"time"
)

// Instants are stored as UTC text in one fixed format so that they sort as text and
// read the same in SQLite and PostgreSQL; calendar days as YYYY-MM-DD.
const (
	TimeFormat = "2006-01-02T15:04:05Z"
	DayFormat  = "2006-01-02"
)

// FormatTime formats t for storage.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime parses a stored instant.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(TimeFormat, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

// FormatDay formats the calendar day of t (in t's location) for storage.
func FormatDay(t time.Time) string { return t.Format(DayFormat) }

// NullTime scans a nullable stored instant.
type NullTime struct {
	Time  time.Time
	Valid bool
}

// Scan implements sql.Scanner.
func (n *NullTime) Scan(v any) error {
	var s sql.NullString
	if err := s.Scan(v); err != nil {
		return err
	}
	if !s.Valid || s.String == "" {
		*n = NullTime{}
		return nil
	}
	t, err := ParseTime(s.String)
	if err != nil {
		return err
	}
	*n = NullTime{Time: t, Valid: true}
	return nil
}

// Time scans a non-null stored instant.
type Time struct{ time.Time }

// Scan implements sql.Scanner.
func (t *Time) Scan(v any) error {
	var n NullTime
	if err := n.Scan(v); err != nil {
		return err
	}
	if !n.Valid {
		return fmt.Errorf("unexpected NULL time")
	}
	t.Time = n.Time
	return nil
}
