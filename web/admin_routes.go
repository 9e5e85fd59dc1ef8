package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// adminRoutes mounts the administration pages under /admin; requireAdmin guards them.
func (s *Server) adminRoutes(r chi.Router) {
	r.Get("/", s.handleAdminIndex)

	r.Get("/rules", s.handleAdminRuleList)
	r.Get("/rules/new", s.handleAdminRuleNew)
	r.Post("/rules", s.handleAdminRuleCreate)
	r.Get("/rules/{id}", s.handleAdminRuleEdit)
	r.Post("/rules/{id}", s.handleAdminRuleUpdate)
	r.Post("/rules/{id}/delete", s.handleAdminRuleDelete)

	r.Get("/calendar", s.handleAdminCalendar)
	r.Post("/calendar/branches/{id}", s.handleAdminBranchHoursSave)
	r.Post("/calendar/days", s.handleAdminClosedDayAdd)
	r.Post("/calendar/days/{id}/delete", s.handleAdminClosedDayDelete)

	r.Get("/import", s.handleAdminImportForm)
	r.Post("/import", s.handleAdminImport)
	r.Get("/import/batches/{id}", s.handleImportBatch)
	r.Post("/import/batches/{id}/actions", s.handleImportBatchActions)
	r.Post("/import/batches/{id}/commit", s.handleImportBatchCommit)
	r.Post("/import/batches/{id}/undo", s.handleImportBatchUndo)
	r.Get("/patrons/import", s.handleAdminPatronLoadForm)
	r.Post("/patrons/import", s.handleAdminPatronLoad)
	r.Get("/patrons/import/{id}", s.handleAdminPatronLoadJob)

	r.Get("/codes", s.handleAdminCodes)
	r.Post("/codes/branch", s.handleAdminCodeAdd("branch"))
	r.Post("/codes/category", s.handleAdminCodeAdd("category"))
	r.Post("/codes/item-type", s.handleAdminCodeAdd("item-type"))
	r.Post("/codes/item-type-price", s.handleAdminItemTypePrice)
	r.Post("/codes/charge-type", s.handleAdminChargeType)

	r.Get("/staff", s.handleAdminStaff)
	r.Post("/staff", s.handleAdminStaffCreate)
	r.Post("/staff/{id}/active", s.handleAdminStaffActive)
	r.Post("/staff/{id}/password", s.handleAdminStaffPassword)
	r.Post("/staff/{id}/waive", s.handleAdminStaffWaive)

	r.Get("/sip", s.handleAdminSIP)
	r.Post("/sip", s.handleAdminSIPCreate)
	r.Post("/sip/lockouts/clear", s.handleAdminSIPLockoutClear)
	r.Get("/sip/{id}", s.handleAdminSIPEdit)
	r.Post("/sip/{id}", s.handleAdminSIPUpdate)
	r.Post("/sip/{id}/active", s.handleAdminSIPActive)
	r.Post("/sip/{id}/password", s.handleAdminSIPPassword)

	r.Get("/patrons/{id}/purge", s.handleAdminPatronPurgeConfirm)
	r.Post("/patrons/{id}/purge", s.handleAdminPatronPurge)

	r.Get("/preferences", s.handleAdminPreferences)
	r.Post("/preferences", s.handleAdminPreferencesSave)

	s.adminSQLReportRoutes(r)
	s.adminCopycatRoutes(r)
	s.adminNoticeRoutes(r)
}

func (s *Server) handleAdminIndex(w http.ResponseWriter, r *http.Request) {
	s.Render(w, r, http.StatusOK, AdminIndexPage(s.page(r, "Administration", "admin")))
}

// adminPathID reads the {id} of an admin URL. A malformed id is a page that does
// not exist, and is answered as such.
func (s *Server) adminPathID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := pathID(r, "There is no page at "+r.URL.Path+". Use the navigation above.")
	if err != nil {
		s.Error(w, r, err)
		return 0, false
	}
	return id, true
}

// adminFormError files err beside its field in errs when it is about one, and returns
// the message to show at the top of the form otherwise. Only errors meant for
// people (invalid, conflict) come here; the caller shows anything else as a page.
func adminFormError(errs FormErrors, err error) string {
	if f := stacks.ErrorField(err); f != "" {
		errs[f] = stacks.ErrorMessage(err)
		return ""
	}
	return stacks.ErrorMessage(err)
}

// isAdminFormError reports whether err is one the form shows again with its message,
// rather than an error page: the input is wrong, or conflicts with what is stored.
func isAdminFormError(err error) bool {
	code := stacks.ErrorCode(err)
	return code == stacks.EINVALID || code == stacks.ECONFLICT
}

// adminID writes an id for a URL or a form value.
func adminID(id int64) string { return strconv.FormatInt(id, 10) }

// adminAny shows a rule's scope name, "Any" for a wildcard.
func adminAny(name string) string {
	if name == "" {
		return "Any"
	}
	return name
}

// adminPeriod shows a number of loan units: "1 day", "14 days", "2 hours".
func adminPeriod(n int, unit string) string {
	if n == 1 {
		unit = strings.TrimSuffix(unit, "s")
	}
	return strconv.Itoa(n) + " " + unit
}

// adminFineCap shows a rule's fine cap, where 0 means none.
func adminFineCap(cents int64) string {
	if cents == 0 {
		return "No cap"
	}
	return formatMoney(cents)
}

// adminWeekday names the weekday of a stored day ("2026-12-25" is a Friday).
func adminWeekday(day string) string {
	t, err := time.Parse(db.DayFormat, day)
	if err != nil {
		return ""
	}
	return t.Weekday().String()
}

// adminBranchOrAll names the branch of a closed day, "All branches" for every one.
func adminBranchOrAll(name string) string {
	if name == "" {
		return "All branches"
	}
	return name
}

// adminWeekdayID is the id of a branch's weekday checkbox: ids are unique on a
// page that holds every branch's form.
func adminWeekdayID(branchID int64, d int) string {
	return "closed_weekdays-" + adminID(branchID) + "-" + strconv.Itoa(d)
}
