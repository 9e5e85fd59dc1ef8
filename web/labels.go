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
// page): the sheet, and find, which reads the labels to print.
func (s *Server) labelRequest(r *http.Request) (labels.Options, func(*db.Tx) ([]labels.Label, error), error) {
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
	switch {
	case opt.Kind == labels.KindPatron:
		prefs, err := s.preferences(r.Context())
		if err != nil {
			return opt, nil, err
		}
		cards := labels.Lines(v.Get("barcodes"))
		return opt, func(tx *db.Tx) ([]labels.Label, error) { return labels.PatronCards(tx, prefs.LibraryName, cards) }, nil
	case v.Get("source") == "since":
		day, err := time.Parse(db.DayFormat, strings.TrimSpace(v.Get("since")))
		if err != nil {
			return opt, nil, stacks.FieldErrorf("since", stacks.EINVALID, "Enter the day as YYYY-MM-DD, for example 2026-11-01.")
		}
		branch, _ := strconv.ParseInt(v.Get("branch"), 10, 64)
		return opt, func(tx *db.Tx) ([]labels.Label, error) { return labels.ItemsAddedSince(tx, day, branch) }, nil
	default:
		barcodes := labels.Lines(v.Get("barcodes"))
		return opt, func(tx *db.Tx) ([]labels.Label, error) { return labels.ItemsByBarcode(tx, barcodes) }, nil
	}
}

// labelsTooLong is what a label sheet past Config.HeavyReadTimeout says, beside
// the field that chose its labels.
func labelsTooLong(r *http.Request) error {
	if r.URL.Query().Get("source") == "since" && r.URL.Query().Get("kind") != labels.KindPatron {
		return stacks.FieldErrorf("since", stacks.EINVALID, "Finding the items took too long and was stopped: narrow it with a later day or one branch.")
	}
	return stacks.FieldErrorf("barcodes", stacks.EINVALID, "Finding the labels took too long and was stopped: print fewer at a time.")
}

// drawLabels reads the labels the form asks for and draws them, and, when pdf
// is not nil, writes them to it as a PDF: all of it in a heavy-read slot, so
// that label sheets, however many or large, cannot take the desk's read
// connection or its share of the processor from it.
func (s *Server) drawLabels(r *http.Request, pdf *bytes.Buffer) (labels.Options, []labels.Drawing, error) {
	opt, find, err := s.labelRequest(r)
	if err != nil {
		return opt, nil, err
	}
	var ds []labels.Drawing
	err = s.readHeavy(r.Context(), labelsTooLong(r), func(tx *db.Tx) error {
		ls, err := find(tx)
		if err != nil {
			return err
		}
		if ds, err = labels.Draw(opt, ls); err != nil || pdf == nil {
			return err
		}
		return labels.WritePDF(pdf, opt, ds, "Labels")
	})
	return opt, ds, err
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
	s.render(w, r, status, LabelsPage(s.page(r, "Labels", "reports"), v))
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
