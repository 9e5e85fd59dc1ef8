package web

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/labels"
	"github.com/stacks-ils/stacks/reports"
)

// LabelsView is the Labels page: what to print, on which sheet, and the preview.
type LabelsView struct {
	Values   url.Values
	Errors   FormErrors
	Error    string
	Branches []reports.Choice
	Sheet    labels.Sheet
	Opt      labels.Options
	Drawings []labels.Drawing
	Pages    []int
	PDFURL   string
}

// labelsService is what the Labels pages need: the branches to choose from,
// and a sheet drawn as a heavy read (Config.HeavyReadTimeout).
type labelsService interface {
	Branches(ctx context.Context) ([]reports.Choice, error)
	Sheet(ctx context.Context, q labels.Request, pdf io.Writer) ([]labels.Drawing, error)
}

// labelRequest reads the Labels form (a GET form: a preview is a bookmarkable
// page): the sheet, and which labels to print.
func (s *Server) labelRequest(r *http.Request) (labels.Request, error) {
	v := r.URL.Query()
	q := labels.Request{Options: labels.Options{Kind: v.Get("kind"), Outlines: v.Get("outlines") != ""}}
	var err error
	if k := v.Get("sheet"); k == "custom" {
		q.Sheet, err = labels.Custom(v)
	} else {
		q.Sheet, err = labels.FindSheet(k)
	}
	if err != nil {
		return q, err
	}
	if s := strings.TrimSpace(v.Get("start")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > q.Sheet.PerPage() {
			return q, stacks.FieldErrorf("start", stacks.EINVALID, "Start at a label from 1 to %d of the sheet.", q.Sheet.PerPage())
		}
		q.Start = n - 1
	}
	switch {
	case q.Kind == labels.KindPatron:
		prefs, err := s.preferences(r.Context())
		if err != nil {
			return q, err
		}
		q.LibraryName, q.Lines = prefs.LibraryName, labels.Lines(v.Get("barcodes"))
	case v.Get("source") == "since":
		day, err := time.Parse(db.DayFormat, strings.TrimSpace(v.Get("since")))
		if err != nil {
			return q, stacks.FieldErrorf("since", stacks.EINVALID, "Enter the day as YYYY-MM-DD, for example 2026-11-01.")
		}
		q.Since, q.AddedSince = true, day
		q.BranchID, _ = strconv.ParseInt(v.Get("branch"), 10, 64)
	default:
		q.Lines = labels.Lines(v.Get("barcodes"))
	}
	return q, nil
}

// drawLabels reads the labels the form asks for and draws them, and, when pdf
// is not nil, writes them to it as a PDF (labels.Service.Sheet).
func (s *Server) drawLabels(r *http.Request, pdf io.Writer) (labels.Options, []labels.Drawing, error) {
	q, err := s.labelRequest(r)
	if err != nil {
		return q.Options, nil, err
	}
	ds, err := s.Labels.Sheet(r.Context(), q, pdf)
	return q.Options, ds, err
}

func (s *Server) labelsView(r *http.Request) (LabelsView, error) {
	v := LabelsView{Values: r.URL.Query(), Errors: FormErrors{}}
	// What the query leaves out takes the usual sheet: a record page sends
	// only the kind and the barcodes ticked, one value each.
	defaults := url.Values{"kind": {labels.KindSpine}, "sheet": {"a4-3x7"}, "source": {"barcodes"}, "start": {"1"},
		"page": {"a4"}, "cols": {"3"}, "rows": {"7"}, "label_w": {"63.5"}, "label_h": {"38.1"}, "left": {"7.2"}, "top": {"15.15"}, "pitch_x": {"66.04"}, "pitch_y": {"38.1"}}
	for k, d := range defaults {
		if _, ok := v.Values[k]; !ok {
			v.Values[k] = d
		}
	}
	if bs := v.Values["barcodes"]; len(bs) > 1 {
		v.Values.Set("barcodes", strings.Join(bs, "\n"))
	}
	var err error
	v.Branches, err = s.Labels.Branches(r.Context())
	return v, err
}

// labelsError shows the Labels form again with what went wrong: beside the
// field (422), or above the form when every heavy-read slot is taken (503).
func (s *Server) labelsError(w http.ResponseWriter, r *http.Request, v LabelsView, err error) {
	status := http.StatusUnprocessableEntity
	switch stacks.ErrorCode(err) {
	case stacks.EINVALID:
	case stacks.ETOOMANY:
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	default:
		s.Error(w, r, err)
		return
	}
	if f := stacks.ErrorField(err); f != "" {
		v.Errors[f] = stacks.ErrorMessage(err)
	} else {
		v.Error = stacks.ErrorMessage(err)
	}
	s.Render(w, r, status, LabelsPage(s.page(r, "Labels", "reports"), v))
}

func (s *Server) handleLabels(w http.ResponseWriter, r *http.Request) {
	v, err := s.labelsView(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, LabelsPage(s.page(r, "Labels", "reports"), v))
}

// handleLabelsPreview shows the sheets as they will print (SVG pages at the
// sheet's size), with the PDF to download.
func (s *Server) handleLabelsPreview(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.Query()) == 0 {
		// Nothing asked for yet: the form.
		redirect(w, r, "/reports/labels", http.StatusSeeOther)
		return
	}
	v, err := s.labelsView(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	opt, ds, err := s.drawLabels(r, nil)
	if err != nil {
		s.labelsError(w, r, v, err)
		return
	}
	v.Drawings, v.Opt, v.Sheet = ds, opt, opt.Sheet
	for p := 0; p < labels.Pages(v.Drawings); p++ {
		v.Pages = append(v.Pages, p)
	}
	v.PDFURL = "/reports/labels/pdf?" + r.URL.RawQuery
	s.Render(w, r, http.StatusOK, LabelsPreviewPage(s.page(r, "Label preview", "reports"), v))
}

func (s *Server) handleLabelsPDF(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.Query()) == 0 {
		redirect(w, r, "/reports/labels", http.StatusSeeOther)
		return
	}
	v, err := s.labelsView(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	var buf bytes.Buffer
	opt, _, err := s.drawLabels(r, &buf)
	if err != nil {
		s.labelsError(w, r, v, err)
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="labels-`+opt.Kind+"-"+s.DB.Now().UTC().Format("2006-01-02")+`.pdf"`)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	if _, err := buf.WriteTo(w); err != nil {
		s.Logger.Warn("write labels pdf", "err", err)
	}
}

// mm writes a length for SVG.
func mm(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// pageDrawings are the drawings of page p.
func (v LabelsView) pageDrawings(p int) []labels.Drawing {
	var out []labels.Drawing
	for _, d := range v.Drawings {
		if d.Page == p {
			out = append(out, d)
		}
	}
	return out
}

func (v LabelsView) viewBox() string { return "0 0 " + mm(v.Sheet.PageW) + " " + mm(v.Sheet.PageH) }

// fontMM is a text size in points, as SVG user units (millimetres).
func fontMM(pt float64) string { return mm(pt * 25.4 / 72) }

func textAnchor(t labels.Text) string {
	if t.Left {
		return "start"
	}
	return "middle"
}

func fontWeight(t labels.Text) string {
	if t.Bold {
		return "bold"
	}
	return "normal"
}

// patronCardURL previews a patron's card on the A4 3 x 7 sheet.
func patronCardURL(card string) string {
	return "/reports/labels/preview?" + url.Values{"kind": {labels.KindPatron}, "sheet": {"a4-3x7"}, "barcodes": {card}, "start": {"1"}}.Encode()
}

// plural writes a count with its noun: "1 sheet", "2 sheets".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// newLabelsService is the Labels pages' service for a Server with cfg.
func newLabelsService(cfg Config) labelsService {
	return labels.NewService(cfg.DB, cfg.HeavyReadTimeout)
}
