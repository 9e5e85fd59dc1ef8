package library_test

import (
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/library"
)

// FuzzParseDay: a day ParseDay accepts is written exactly YYYY-MM-DD and is the
// day it parses to; anything else is refused with a message about the day field.
func FuzzParseDay(f *testing.F) {
	for _, s := range []string{"2026-12-25", "2026-02-29", "2024-02-29", "0000-01-01", "9999-12-31", "2026-1-5",
		"2026-12-25 ", "2026-12-25T00:00:00Z", "", "\xff", "+2026-12-25", "２０２６-12-25"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := library.ParseDay(s)
		if err != nil {
			if stacks.ErrorField(err) != "day" || stacks.ErrorCode(err) != stacks.EINVALID {
				t.Fatalf("ParseDay(%q): %v", s, err)
			}
			return
		}
		if d.Format("2006-01-02") != s || d.Location() != time.UTC || d.Hour() != 0 {
			t.Fatalf("ParseDay(%q) = %v", s, d)
		}
	})
}

// FuzzParseClosingTime: a time ParseClosingTime accepts is HH:MM from 00:00 to 23:59
// and gives back its hour and minute.
func FuzzParseClosingTime(f *testing.F) {
	for _, s := range []string{"20:00", "00:00", "23:59", "24:00", "9:30", "09:60", "", "\xff\xff:00", "1a:00", "20:00 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, m, err := library.ParseClosingTime(s)
		if err != nil {
			if stacks.ErrorField(err) != "closes_at" {
				t.Fatalf("ParseClosingTime(%q): %v", s, err)
			}
			return
		}
		if h < 0 || h > 23 || m < 0 || m > 59 {
			t.Fatalf("ParseClosingTime(%q) = %d, %d", s, h, m)
		}
		if want := time.Date(2000, 1, 1, h, m, 0, 0, time.UTC).Format("15:04"); want != s {
			t.Fatalf("ParseClosingTime(%q) = %d, %d, which is written %q", s, h, m, want)
		}
	})
}
