package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/reports"
)

// adminSQLReportRoutes mounts the saved SQL reports (administrators only: they
// read every table, patrons' details included). Running one, on the page or as
// CSV, is a form post: a run takes a heavy-read slot for up to its time limit and
// writes the audit log, so a link or image on another site must not start one
// (http.CrossOriginProtection refuses cross-site posts). The report's page (a GET)
// shows the form and runs nothing.
func (s *Server) adminSQLReportRoutes(r chi.Router) {
	r.Get("/sql-reports", s.handleSQLReportList)
	r.Post("/sql-reports", s.handleSQLReportCreate)
	r.Get("/sql-reports/{id}", s.handleSQLReportShow)
	r.Post("/sql-reports/{id}", s.handleSQLReportUpdate)
	r.Post("/sql-reports/{id}/run", s.handleSQLReportRun)
	r.Post("/sql-reports/{id}/delete", s.handleSQLReportDelete)
	r.Post("/sql-reports/{id}/csv", s.handleSQLReportCSV)
}

// sqlReportService keeps and runs the saved SQL reports (reports.Service).
type sqlReportService interface {
	SavedReports(ctx context.Context) ([]reports.SavedReport, error)
	SavedReport(ctx context.Context, id int64) (reports.SavedReport, error)
	SaveReport(ctx context.Context, actor stacks.Actor, id int64, in reports.SavedInput) (int64, error)
	DeleteReport(ctx context.Context, actor stacks.Actor, id int64) error
	RunReport(ctx context.Context, actor stacks.Actor, r reports.SavedReport, values map[string]string, lim reports.Limits, csv bool) (reports.Result, error)
}

func sqlReportURL(id int64) string { return "/admin/sql-reports/" + strconv.FormatInt(id, 10) }

// SQLReportListView lists the saved SQL reports, with the form for a new one.
type SQLReportListView struct {
	Reports []reports.SavedReport
	Input   reports.SavedInput
	Errors  FormErrors
	Error   string
}

// SQLReportView is one saved report: its parameters' form, its result once run,
// and its definition to edit.
type SQLReportView struct {
	Report reports.SavedReport
	Params []string
	Values url.Values
	Input  reports.SavedInput
	Errors FormErrors
	// RunError is why the run failed (refused, stopped, SQLite's complaint).
	RunError string
	Result   *reports.Result
	Limits   reports.Limits
}

func sqlInput(r *http.Request) reports.SavedInput {
	return reports.SavedInput{Name: r.PostFormValue("name"), Description: r.PostFormValue("description"), SQL: r.PostFormValue("sql")}
}

func (s *Server) renderSQLReportList(w http.ResponseWriter, r *http.Request, status int, v SQLReportListView) {
	var err error
	if v.Reports, err = s.reports.SavedReports(r.Context()); err != nil {
		s.Error(w, r, err)
		return
	}
	if v.Errors == nil {
		v.Errors = FormErrors{}
	}
	s.Render(w, r, status, SQLReportListPage(s.page(r, "SQL reports", "admin"), v))
}

func (s *Server) handleSQLReportList(w http.ResponseWriter, r *http.Request) {
	s.renderSQLReportList(w, r, http.StatusOK, SQLReportListView{})
}

func (s *Server) handleSQLReportCreate(w http.ResponseWriter, r *http.Request) {
	in := sqlInput(r)
	id, err := s.reports.SaveReport(r.Context(), userFrom(r.Context()).Actor(), 0, in)
	if isAdminFormError(err) {
		v := SQLReportListView{Input: in, Errors: FormErrors{}}
		v.Error = adminFormError(v.Errors, err)
		s.renderSQLReportList(w, r, http.StatusUnprocessableEntity, v)
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Report “"+in.Name+"” saved.")
	redirect(w, r, sqlReportURL(id), http.StatusSeeOther)
}

// loadSQLReport reads the report of the URL into a view, with the parameters'
// values of the run form (posted), or of the query to fill the form in (a GET).
func (s *Server) loadSQLReport(w http.ResponseWriter, r *http.Request) (SQLReportView, bool) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return SQLReportView{}, false
	}
	values := r.URL.Query()
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			s.Error(w, r, stacks.Errorf(stacks.EINVALID, "The form could not be read: run the report again from its page."))
			return SQLReportView{}, false
		}
		values = r.PostForm
	}
	v := SQLReportView{Errors: FormErrors{}, Values: values, Limits: reports.Limits{Timeout: reports.DefaultSQLTimeout, MaxRows: reports.DefaultSQLMaxRows}}
	var err error
	if v.Report, err = s.reports.SavedReport(r.Context(), id); err != nil {
		s.Error(w, r, err)
		return v, false
	}
	v.Params = v.Report.Params()
	v.Input = reports.SavedInput{Name: v.Report.Name, Description: v.Report.Description, SQL: v.Report.SQL}
	return v, true
}

// paramValues are the parameters' values of the run form.
func (v SQLReportView) paramValues() map[string]string {
	m := map[string]string{}
	for _, p := range v.Params {
		if vals, ok := v.Values["p_"+p]; ok {
			m[p] = vals[0]
		}
	}
	return m
}

// handleSQLReportShow shows the report's run form (filled in from the query, if
// any) and its definition; it runs nothing.
func (s *Server) handleSQLReportShow(w http.ResponseWriter, r *http.Request) {
	s.sqlReportPage(w, r, false)
}

// handleSQLReportRun runs the report with the posted parameters and shows the
// result under the form (the result is the post's answer: reloading asks the
// browser to post again).
func (s *Server) handleSQLReportRun(w http.ResponseWriter, r *http.Request) {
	s.sqlReportPage(w, r, true)
}

func (s *Server) sqlReportPage(w http.ResponseWriter, r *http.Request, run bool) {
	v, ok := s.loadSQLReport(w, r)
	if !ok {
		return
	}
	status := http.StatusOK
	if run {
		res, err := s.reports.RunReport(r.Context(), userFrom(r.Context()).Actor(), v.Report, v.paramValues(), v.Limits, false)
		switch code := stacks.ErrorCode(err); {
		case err == nil:
			v.Result = &res
		case code == stacks.EINVALID || code == stacks.ETOOMANY:
			v.RunError = stacks.ErrorMessage(err)
			status = http.StatusUnprocessableEntity
			if code == stacks.ETOOMANY {
				status = http.StatusServiceUnavailable
			}
		default:
			s.Error(w, r, err)
			return
		}
	}
	s.Render(w, r, status, SQLReportPage(s.page(r, v.Report.Name, "admin"), v))
}

func (s *Server) handleSQLReportUpdate(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadSQLReport(w, r)
	if !ok {
		return
	}
	v.Input = sqlInput(r)
	_, err := s.reports.SaveReport(r.Context(), userFrom(r.Context()).Actor(), v.Report.ID, v.Input)
	if isAdminFormError(err) {
		v.RunError = adminFormError(v.Errors, err)
		s.Render(w, r, http.StatusUnprocessableEntity, SQLReportPage(s.page(r, v.Report.Name, "admin"), v))
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Report “"+v.Input.Name+"” saved.")
	redirect(w, r, sqlReportURL(v.Report.ID), http.StatusSeeOther)
}

func (s *Server) handleSQLReportDelete(w http.ResponseWriter, r *http.Request) {
	id, ok := s.adminPathID(w, r)
	if !ok {
		return
	}
	if err := s.reports.DeleteReport(r.Context(), userFrom(r.Context()).Actor(), id); err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Report deleted.")
	redirect(w, r, "/admin/sql-reports", http.StatusSeeOther)
}

func (s *Server) handleSQLReportCSV(w http.ResponseWriter, r *http.Request) {
	v, ok := s.loadSQLReport(w, r)
	if !ok {
		return
	}
	res, err := s.reports.RunReport(r.Context(), userFrom(r.Context()).Actor(), v.Report, v.paramValues(), v.Limits, true)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	writeCSV(w, r, s, "sql-report-"+strconv.FormatInt(v.Report.ID, 10)+"-"+s.DB.Now().UTC().Format("2006-01-02")+".csv", res)
}
