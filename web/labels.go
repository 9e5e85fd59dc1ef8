package web

import (
	"bytes"
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

// labelRequest reads the Labels form (a GET form: a preview is a bookmarkable
// page) and finds the labels to print.
func (s *Server) labelRequest(r *http.Request) (labels.Options, []labels.Label, error) {
	v := r.URL.Query()
	opt := labels.Options{Kind: v.Get("kind"), Outlines: v.Get("outlines") != ""}
	var err error
	if k := v.Get("sheet"); k == "custom" {
		opt.Sheet, err = labels.Custom(v)
	} else {
		opt.Sheet, err = labels.FindSheet(k)
	}
	if err != nil {
		return opt, nil, err
	}
	if s := strings.TrimSpace(v.Get("start")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > opt.Sheet.PerPage() {
			return opt, nil, stacks.FieldErrorf("start", stacks.EINVALID, "Start at a label from 1 to %d of the sheet.", opt.Sheet.PerPage())
		}
		opt.Start = n - 1
	}
	var ls []labels.Label
	prefs, err := s.preferences(r.Context())
	if err != nil {
		return opt, nil, err
	}
	err = s.DB.Read(r.Context(), func(tx *db.Tx) (err error) {
		switch {
		case opt.Kind == labels.KindPatron:
			ls, err = labels.PatronCards(tx, prefs.LibraryName, labels.Lines(v.Get("barcodes")))
		case v.Get("source") == "since":
			day, perr := time.Parse(db.DayFormat, strings.TrimSpace(v.Get("since")))
			if perr != nil {
				return stacks.FieldErrorf("since", stacks.EINVALID, "Enter the day as YYYY-MM-DD, for example 2026-11-01.")
			}
			branch, _ := strconv.ParseInt(v.Get("branch"), 10, 64)
			ls, err = labels.ItemsAddedSince(tx, day, branch)
		default:
			ls, err = labels.ItemsByBarcode(tx, labels.Lines(v.Get("barcodes")))
		}
		return err
	})
	return opt, ls, err
}

func (s *Server) labelsView(r *http.Request) (LabelsView, error) {
	v := LabelsView{Values: r.URL.Query(), Errors: FormErrors{}}
	if len(v.Values) == 0 {
		v.Values = url.Values{"kind": {labels.KindSpine}, "sheet": {"a4-3x7"}, "source": {"barcodes"}, "start": {"1"},
			"page": {"a4"}, "cols": {"3"}, "rows": {"7"}, "label_w": {"63.5"}, "label_h": {"38.1"}, "left": {"7.2"}, "top": {"15.15"}, "pitch_x": {"66.04"}, "pitch_y": {"38.1"}}
	}
	err := s.DB.Read(r.Context(), func(tx *db.Tx) error {
		c, err := reports.ListChoices(tx)
		v.Branches = c.Branches
		return err
	})
	return v, err
}

func (s *Server) labelsError(w http.ResponseWriter, r *http.Request, v LabelsView, err error) {
	if code := stacks.ErrorCode(err); code != stacks.EINVALID {
		s.Error(w, r, err)
		return
	}
	if f := stacks.ErrorField(err); f != "" {
		v.Errors[f] = stacks.ErrorMessage(err)
	} else {
		v.Error = stacks.ErrorMessage(err)
	}
	s.render(w, r, http.StatusUnprocessableEntity, LabelsPage(s.page(r, "Labels", "reports"), v))
}

func (s *Server) handleLabels(w http.ResponseWriter, r *http.Request) {
	v, err := s.labelsView(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, LabelsPage(s.page(r, "Labels", "reports"), v))
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
	opt, ls, err := s.labelRequest(r)
	if err == nil {
		v.Drawings, err = labels.Draw(opt, ls)
	}
	if err != nil {
		s.labelsError(w, r, v, err)
		return
	}
	v.Opt, v.Sheet = opt, opt.Sheet
	for p := 0; p < labels.Pages(v.Drawings); p++ {
		v.Pages = append(v.Pages, p)
	}
	v.PDFURL = "/reports/labels/pdf?" + r.URL.RawQuery
	s.render(w, r, http.StatusOK, LabelsPreviewPage(s.page(r, "Label preview", "reports"), v))
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
	opt, ls, err := s.labelRequest(r)
	var ds []labels.Drawing
	if err == nil {
		ds, err = labels.Draw(opt, ls)
	}
	if err != nil {
		s.labelsError(w, r, v, err)
		return
	}
	var buf bytes.Buffer
	if err := labels.WritePDF(&buf, opt, ds, "Labels"); err != nil {
		s.Error(w, r, err)
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
