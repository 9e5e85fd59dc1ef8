package web

import (
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/notices"
	"github.com/stacks-ils/stacks/sip"
)

// libraryServices are the domain services behind the calendar, preferences,
// notices and SIP accounts pages, each field the small interface its handlers
// declare beside them.
type libraryServices struct {
	calendar    calendarService
	preferences preferencesService
	notices     noticesAdminService
	print       noticePrintService
	sip         sipAccountsService
}

// newLibraryServices builds them on d; prefs is the server's preference cache,
// which saving preferences drops.
func newLibraryServices(d *db.DB, prefs *library.PreferenceCache) libraryServices {
	lib := library.NewService(d, prefs)
	n := notices.NewService(d, prefs)
	return libraryServices{calendar: lib, preferences: lib, notices: n, print: n, sip: sip.NewAccounts(d)}
}
