package opac

import (
	"time"

	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/patrons"
)

// Page is what the layout needs on every page.
type Page struct {
	Title       string
	LibraryName string
	// Patron is the signed-in patron, nil for a visitor.
	Patron *patrons.Patron
	// Nav is the navigation entry to mark as current: "search", "account".
	Nav     string
	Flashes []Flash
	// Location is the library's time zone: dates are shown there.
	Location *time.Location
	// Canonical, if set, is the page's permanent address (a record's).
	Canonical string
}

// Flash is a one-off message shown at the top of the next page.
type Flash = kit.Flash

// Day formats t as a patron reads a date: "Monday 21 December 2026", in the
// library's time zone.
func (p *Page) Day(t time.Time) string {
	return t.In(p.Location).Format("Monday 2 January 2006")
}

// FormErrors maps form field names to messages, shown beside each field.
type FormErrors = kit.FormErrors
