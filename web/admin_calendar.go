package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/library"
)

// AdminCalendarView is the calendar page: each branch's weekly hours, the closed
// days to come, and the form that adds one.
type AdminCalendarView struct {
	Branches []AdminBranchHours
	Days     []library.ClosedDay
	Add      AdminClosedDayForm
	// Today is the library's local date: the list starts there.
	Today string
}

// AdminBranchHours is one branch's weekly-hours form.
type AdminBranchHours struct {
	Branch   library.Branch
	Closed   [7]bool
	ClosesAt string
	Errors   FormErrors
}

// AdminClosedDayForm is the form that adds a closed day.
type AdminClosedDayForm struct {
	Day         string
	BranchID    int64
	Description string
	// Choices are the branches to choose from, besides "All branches".
	Choices []library.Branch
	Errors  FormErrors
}

// adminWeekdayNames are the weekdays in the order of the form, Sunday first (0).
var adminWeekdayNames = [7]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

func adminBranchHours(b library.Branch) AdminBranchHours {
	h := AdminBranchHours{Branch: b, ClosesAt: b.ClosesAt, Errors: FormErrors{}}
	for _, d := range b.ClosedWeekdays {
		h.Closed[d] = true
	}
	return h
}

// calendarService is what the calendar page needs of package library.
type calendarService interface {
	Calendar(ctx context.Context) (library.CalendarOverview, error)
	SetBranchHours(ctx context.Context, actor stacks.Actor, branchID int64, closedWeekdays []time.Weekday, closesAt string) (library.Branch, error)
	AddClosedDay(ctx context.Context, actor stacks.Actor, branchID int64, day, description string) (library.ClosedDay, error)
	DeleteClosedDay(ctx context.Context, actor stacks.Actor, id int64) error
}

// loadAdminCalendar reads the calendar page's data.
func (s *Server) loadAdminCalendar(ctx context.Context) (AdminCalendarView, error) {
	c, err := s.lib.calendar.Calendar(ctx)
	if err != nil {
		return AdminCalendarView{}, err
	}
	v := AdminCalendarView{Add: AdminClosedDayForm{Errors: FormErrors{}, Choices: c.Branches}, Days: c.ClosedDays, Today: c.Today}
	for _, b := range c.Branches {
		v.Branches = append(v.Branches, adminBranchHours(b))
	}
	return v, nil
}

func (s *Server) handleAdminCalendar(w http.ResponseWriter, r *http.Request) {
	v, err := s.loadAdminCalendar(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, AdminCalendarPage(s.page(r, "Calendar", "admin"), &v))
}

// renderAdminCalendar shows the calendar page again after a refused form; change
// puts the refused form, as typed, in place of the stored one (or says why it
// cannot).
func (s *Server) renderAdminCalendar(w http.ResponseWriter, r *http.Request, status int, change func(*AdminCalendarView) error) {
	v, err := s.loadAdminCalendar(r.Context())
	if err == nil {
		err = change(&v)
	}
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, status, AdminCalendarPage(s.page(r, "Calendar", "admin"), &v))
}

func (s *Server) handleAdminBranchHoursSave(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	form := AdminBranchHours{ClosesAt: strings.TrimSpace(r.PostFormValue("closes_at")), Errors: FormErrors{}}
	var days []time.Weekday
	for _, v := range r.PostForm["closed_weekdays"] {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 6 {
			form.Errors["closed_weekdays"] = "Tick the days the branch is closed every week."
			continue
		}
		form.Closed[n] = true
		days = append(days, time.Weekday(n))
	}

	// A form in error is shown again without writing: the branch's row in the
	// page says whether the branch exists.
	status := http.StatusUnprocessableEntity
	if len(form.Errors) == 0 {
		branch, err := s.lib.calendar.SetBranchHours(r.Context(), userFrom(r.Context()).Actor(), id, days, form.ClosesAt)
		if err == nil {
			s.Flash(r, "ok", branch.Name+": weekly closed days and closing time saved.")
			redirect(w, r, "/admin/calendar", http.StatusSeeOther)
			return
		}
		if !isAdminFormError(err) {
			s.Error(w, r, err)
			return
		}
		status = kit.CodeStatus(stacks.ErrorCode(err))
		if msg := adminFormError(form.Errors, err); msg != "" {
			form.Errors["closed_weekdays"] = msg
		}
	}
	s.renderAdminCalendar(w, r, status, func(v *AdminCalendarView) error {
		for i := range v.Branches {
			if v.Branches[i].Branch.ID == id {
				form.Branch = v.Branches[i].Branch
				v.Branches[i] = form
				return nil
			}
		}
		return stacks.Errorf(stacks.ENOTFOUND, "There is no branch with id %d.", id)
	})
}

func (s *Server) handleAdminClosedDayAdd(w http.ResponseWriter, r *http.Request) {
	form := AdminClosedDayForm{
		Day:         strings.TrimSpace(r.PostFormValue("day")),
		Description: strings.TrimSpace(r.PostFormValue("description")),
		Errors:      FormErrors{},
	}
	branchID, perr := strconv.ParseInt(r.PostFormValue("branch_id"), 10, 64)
	if perr != nil || branchID < 0 {
		form.Errors["branch_id"] = "Choose a branch from the list, or All branches."
	}
	form.BranchID = branchID

	var added library.ClosedDay
	var err error
	if len(form.Errors) == 0 {
		added, err = s.lib.calendar.AddClosedDay(r.Context(), userFrom(r.Context()).Actor(), branchID, form.Day, form.Description)
		if err == nil {
			where := "all branches"
			if added.BranchID != 0 {
				where = added.BranchName
			}
			msg := "Closed day added: " + added.Day + ", " + where
			if added.Description != "" {
				msg += " (" + added.Description + ")"
			}
			s.Flash(r, "ok", msg+".")
			redirect(w, r, "/admin/calendar", http.StatusSeeOther)
			return
		}
		if !isAdminFormError(err) {
			s.Error(w, r, err)
			return
		}
	}
	status := http.StatusUnprocessableEntity
	if err != nil {
		status = kit.CodeStatus(stacks.ErrorCode(err))
		if msg := adminFormError(form.Errors, err); msg != "" {
			form.Errors["day"] = msg
		}
	}
	s.renderAdminCalendar(w, r, status, func(v *AdminCalendarView) error {
		form.Choices = v.Add.Choices
		v.Add = form
		return nil
	})
}

func (s *Server) handleAdminClosedDayDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	err := s.lib.calendar.DeleteClosedDay(r.Context(), userFrom(r.Context()).Actor(), id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "The closed day has been deleted.")
	redirect(w, r, "/admin/calendar", http.StatusSeeOther)
}
