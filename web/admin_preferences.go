package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/library"
)

// AdminPreferencesForm is the system preferences form, as typed.
type AdminPreferencesForm struct {
	LibraryName string
	// FinesLimit is an amount, "5.00".
	FinesLimit string
	TimeZone   string
	// DeskIdle is the minutes after which an idle Check out visit ends, "5".
	DeskIdle string
	// AnonymiseDays and PurgeYears are the privacy preferences, "0" for never.
	AnonymiseDays string
	PurgeYears    string
	Errors        FormErrors
}

// adminMaxLibraryName keeps the name short enough for the page header.
const adminMaxLibraryName = 100

// preferencesService is what the preferences page needs of package library.
type preferencesService interface {
	StoredPreferences(ctx context.Context) (library.Preferences, error)
	SavePreferences(ctx context.Context, actor stacks.Actor, u library.PreferencesUpdate) error
}

func (s *Server) handleAdminPreferences(w http.ResponseWriter, r *http.Request) {
	p, err := s.lib.preferences.StoredPreferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	f := AdminPreferencesForm{
		LibraryName:   p.LibraryName,
		FinesLimit:    formatMoney(p.FinesLimitCents),
		TimeZone:      p.Location.String(),
		DeskIdle:      strconv.Itoa(p.DeskIdleMinutes),
		AnonymiseDays: strconv.Itoa(p.AnonymiseLoansAfterDays),
		PurgeYears:    strconv.Itoa(p.PurgeInactiveAfterYears),
		Errors:        FormErrors{},
	}
	s.Render(w, r, http.StatusOK, AdminPreferencesPage(s.page(r, "Preferences", "admin"), &f))
}

// parse checks the posted preferences, filing a message beside each field in
// error, and returns the fines limit in cents, the desk's idle minutes, and
// the privacy preferences.
func (f *AdminPreferencesForm) parse() (finesLimitCents int64, idleMinutes, anonymiseDays, purgeYears int) {
	if f.LibraryName == "" {
		f.Errors["library_name"] = "Enter the library's name; it heads every page."
	} else if utf8.RuneCountInString(f.LibraryName) > adminMaxLibraryName {
		f.Errors["library_name"] = fmt.Sprintf("The name can be at most %d characters long.", adminMaxLibraryName)
	}
	cents, ok := parseMoney(f.FinesLimit)
	if !ok {
		f.Errors["fines_limit"] = "Enter an amount, for example 5.00."
	}
	switch _, err := time.LoadLocation(f.TimeZone); {
	case f.TimeZone == "":
		f.Errors["timezone"] = "Enter the library's time zone, for example Europe/London or UTC."
	case f.TimeZone == "Local" || err != nil:
		f.Errors["timezone"] = fmt.Sprintf("%q is not a time zone name; use one such as Europe/London, America/New_York or UTC.", f.TimeZone)
	}
	idle, err := strconv.Atoi(f.DeskIdle)
	if err != nil || idle < 0 || idle > library.MaxDeskIdleMinutes {
		f.Errors["desk_idle"] = fmt.Sprintf("Enter a whole number of minutes from 0 to %d, for example 5 (0 keeps a visit open until staff finish it).", library.MaxDeskIdleMinutes)
	}
	anon, err := strconv.Atoi(f.AnonymiseDays)
	if err != nil || anon < 0 || anon > library.MaxAnonymiseLoansAfterDays {
		f.Errors["anonymise_days"] = fmt.Sprintf("Enter a whole number of days from 0 to %d, for example 90 (0 keeps the loan history for ever).", library.MaxAnonymiseLoansAfterDays)
	}
	purge, err := strconv.Atoi(f.PurgeYears)
	if err != nil || purge < 0 || purge > library.MaxPurgeInactiveAfterYears {
		f.Errors["purge_years"] = fmt.Sprintf("Enter a whole number of years from 0 to %d, for example 3 (0 never deletes patrons).", library.MaxPurgeInactiveAfterYears)
	}
	return cents, idle, anon, purge
}

func (s *Server) handleAdminPreferencesSave(w http.ResponseWriter, r *http.Request) {
	f := AdminPreferencesForm{
		LibraryName:   strings.TrimSpace(r.PostFormValue("library_name")),
		FinesLimit:    strings.TrimSpace(r.PostFormValue("fines_limit")),
		TimeZone:      strings.TrimSpace(r.PostFormValue("timezone")),
		DeskIdle:      strings.TrimSpace(r.PostFormValue("desk_idle")),
		AnonymiseDays: strings.TrimSpace(r.PostFormValue("anonymise_days")),
		PurgeYears:    strings.TrimSpace(r.PostFormValue("purge_years")),
		Errors:        FormErrors{},
	}
	limit, idle, anon, purge := f.parse()
	if len(f.Errors) > 0 {
		s.Render(w, r, http.StatusUnprocessableEntity, AdminPreferencesPage(s.page(r, "Preferences", "admin"), &f))
		return
	}
	err := s.lib.preferences.SavePreferences(r.Context(), userFrom(r.Context()).Actor(), library.PreferencesUpdate{
		LibraryName: f.LibraryName, FinesLimitCents: limit, TimeZone: f.TimeZone,
		DeskIdleMinutes: idle, AnonymiseLoansAfterDays: anon, PurgeInactiveAfterYears: purge,
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Preferences saved.")
	redirect(w, r, "/admin/preferences", http.StatusSeeOther)
}
