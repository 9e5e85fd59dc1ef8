package web

import (
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
)

// formatMoney shows cents as an amount: see stacks.FormatMoney.
func formatMoney(cents int64) string { return stacks.FormatMoney(cents) }

// parseMoney reads an amount typed by staff ("5", "5.5", "5.50", "5,50") as cents:
// digits only (no sign), at most nine before the decimal point.
func parseMoney(s string) (int64, bool) {
	s = strings.TrimSpace(strings.ReplaceAll(s, ",", "."))
	if s == "" || len(s) > 15 || strings.ContainsFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }) {
		return 0, false
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" {
		whole = "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w < 0 || len(whole) > 9 {
		return 0, false
	}
	var f int64
	if hasFrac {
		if len(frac) == 0 || len(frac) > 2 {
			return 0, false
		}
		if len(frac) == 1 {
			frac += "0"
		}
		f, err = strconv.ParseInt(frac, 10, 64)
		if err != nil || f < 0 {
			return 0, false
		}
	}
	return w*100 + f, true
}

// formatDate shows the local calendar date of t: "2026-12-21".
func formatDate(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02")
}

// formatDateTime shows t in local time to the minute: "2026-12-21 20:00".
func formatDateTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04")
}
