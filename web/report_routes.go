package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/reports"
)

// reportRoutes mounts the staff reports, the stocktake, labels and the
// circulation history pages.
func (s *Server) reportRoutes(r chi.Router) {
	r.Get("/reports", s.handleReportsIndex)
	r.Get("/reports/stocktake", s.handleStocktakeStart)
	r.Post("/reports/stocktake", s.handleStocktakeCreate)
	r.Post("/reports/stocktake/{id}/scan", s.handleStocktakeScan)
	r.Post("/reports/stocktake/{id}/checkin", s.handleStocktakeCheckin)
	r.Get("/reports/labels", s.handleLabels)
	// The GETs that run a report, draw labels or read a history stay links (a
	// report's address is worth bookmarking and sending to a colleague) but only
	// from this site: see sameOrigin and docs/security.md.
	r.Group(func(r chi.Router) {
		r.Use(s.sameOrigin)
		r.Get("/reports/stocktake/{id}", s.handleStocktakeScanPage)
		r.Get("/reports/stocktake/{id}/results", s.handleStocktakeResults)
		r.Get("/reports/{slug}", s.handleReport)
		r.Get("/reports/{slug}/csv", s.handleReportCSV)
		r.Get("/reports/labels/preview", s.handleLabelsPreview)
		r.Get("/reports/labels/pdf", s.handleLabelsPDF)
		r.Get("/items/{id}/history", s.handleItemHistory)
		r.Get("/patrons/{id}/history", s.handlePatronHistory)
	})
}

func reportURL(slug string) string { return "/reports/" + slug }

// ReportsIndexView lists the standard reports (and, for administrators, the saved
// SQL reports).
type ReportsIndexView struct {
	Reports []reports.Definition
	IsAdmin bool
}

func (s *Server) handleReportsIndex(w http.ResponseWriter, r *http.Request) {
	v := ReportsIndexView{Reports: reports.Definitions, IsAdmin: userFrom(r.Context()).IsAdmin()}
	s.Render(w, r, http.StatusOK, ReportsIndexPage(s.page(r, "Reports", "reports"), v))
}

// ReportView is one standard report: its form, and its result once run.
type ReportView struct {
	Def     reports.Definition
	Values  url.Values
	Choices reports.Choices
	Errors  FormErrors
	// Error is a message about the whole report (busy, too long).
	Error  string
	Result *reports.Result
	CSVURL string
}

// reportForm reads the report's filters: the query, or the report's defaults on a
// first visit (no query at all).
func (s *Server) reportForm(r *http.Request, def reports.Definition) url.Values {
	v := r.URL.Query()
	if len(v) == 0 {
		prefs, err := s.preferences(r.Context())
		loc := time.UTC
		if err == nil && prefs.Location != nil {
			loc = prefs.Location
		}
		now := s.DB.Now().In(loc)
		v = def.Defaults(time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC))
	}
	return v
}

// reportService runs the standard reports (reports.Service): a report is a
// heavy read within Config.HeavyReadTimeout.
type reportService interface {
	Report(ctx context.Context, def reports.Definition, values url.Values) (reports.ReportPage, error)
	Run(ctx context.Context, def reports.Definition, f reports.Filter) (reports.Result, error)
}

// reportsService is the reports domain as the report, SQL report and
// stocktake pages use it.
type reportsService interface {
	reportService
	sqlReportService
	stocktakeService
}

// newReportsService is the reports domain of a server for cfg.
func newReportsService(cfg Config) reportsService {
	return reports.NewService(cfg.DB, cfg.HeavyReadTimeout, cfg.Logger)
}

func (s *Server) handleReport(w http.ResponseWriter, r *http.Request) {
	def, err := reports.Find(chi.URLParam(r, "slug"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := ReportView{Def: def, Values: s.reportForm(r, def), Errors: FormErrors{}}
	csvQuery := url.Values{}
	for k, vs := range v.Values {
		if k != reports.FieldPage {
			csvQuery[k] = vs
		}
	}
	v.CSVURL = reportURL(def.Slug) + "/csv?" + csvQuery.Encode()
	p, err := s.reports.Report(r.Context(), def, v.Values)
	v.Choices, v.Result = p.Choices, p.Result
	page := s.page(r, def.Title, "reports")
	switch stacks.ErrorCode(err) {
	case "":
		s.Render(w, r, http.StatusOK, ReportPage(page, v))
	case stacks.ETOOMANY:
		// Every slot taken: try again in a moment.
		v.Error = stacks.ErrorMessage(err)
		w.Header().Set("Retry-After", "1")
		s.Render(w, r, http.StatusServiceUnavailable, ReportPage(page, v))
	case stacks.EINVALID:
		// A filter not understood (beside its field), or past the deadline:
		// narrow it, not the same again at once.
		if fld := stacks.ErrorField(err); fld != "" {
			v.Errors[fld] = stacks.ErrorMessage(err)
		} else {
			v.Error = stacks.ErrorMessage(err)
		}
		s.Render(w, r, http.StatusUnprocessableEntity, ReportPage(page, v))
	default:
		s.Error(w, r, err)
	}
}

// handleReportCSV sends the whole report (every row, not the page's first
// reports.PageRows) as a CSV file to download.
func (s *Server) handleReportCSV(w http.ResponseWriter, r *http.Request) {
	def, err := reports.Find(chi.URLParam(r, "slug"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	f, err := def.ParseFilter(s.reportForm(r, def))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	f.All = true
	name := def.Slug + "-" + s.DB.Now().UTC().Format("2006-01-02") + ".csv"
	// A report that streams (the overdue items) hands each row to the file as it
	// reads it: the headers go with the first row, and an error after that can
	// only cut the file short (logged).
	cw := reports.NewCSVWriter(w)
	streamed := false
	f.Emit = func(cols []reports.Column, row []string) error {
		if !streamed {
			streamed = true
			csvHeaders(w, name)
		}
		return cw.Row(cols, row)
	}
	res, err := s.reports.Run(r.Context(), def, f)
	switch {
	case err != nil && !streamed:
		s.heavyError(w, r, err)
		return
	case err != nil:
		s.Logger.Warn("write csv", "err", err, "path", r.URL.Path)
		return
	case !streamed:
		csvHeaders(w, name)
	}
	for _, row := range res.Rows {
		if err := cw.Row(res.Columns, row); err != nil {
			s.Logger.Warn("write csv", "err", err, "path", r.URL.Path)
			return
		}
	}
	if err := cw.Close(res.Columns); err != nil {
		s.Logger.Warn("write csv", "err", err, "path", r.URL.Path)
	}
}

// csvHeaders are the headers of a CSV attachment named name.
func csvHeaders(w http.ResponseWriter, name string) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8; header=present")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
}

// writeCSV sends res as a CSV attachment named name.
func writeCSV(w http.ResponseWriter, r *http.Request, s *Server, name string, res reports.Result) {
	csvHeaders(w, name)
	if err := reports.WriteCSV(w, res); err != nil {
		s.Logger.Warn("write csv", "err", err, "path", r.URL.Path)
	}
}

// pageURL is the report's URL with its filters, at page n.
func (v ReportView) pageURL(n int) string {
	q := url.Values{}
	for k, vs := range v.Values {
		q[k] = vs
	}
	q.Set(reports.FieldPage, strconv.Itoa(n))
	return reportURL(v.Def.Slug) + "?" + q.Encode()
}

// selected reports whether the form value of field is value.
func (v ReportView) selected(field, value string) bool { return v.Values.Get(field) == value }

// idValue writes an id as a form value.
func idValue(id int64) string { return adminID(id) }
