package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/copycat"
)

// copycatService is what the copy cataloguing pages need of package copycat.
type copycatService interface {
	Search(ctx context.Context, q copycat.Query, max int) ([]copycat.Result, error)
	Import(ctx context.Context, actor stacks.Actor, rec *marc.Record, origin string, mode copycat.ImportMode, overlay int64) (copycat.ImportResult, error)
	Targets(ctx context.Context) ([]copycat.Target, error)
	Target(ctx context.Context, id int64) (copycat.Target, error)
	AddTarget(ctx context.Context, actor stacks.Actor, t copycat.Target) (copycat.Target, error)
	UpdateTarget(ctx context.Context, actor stacks.Actor, t copycat.Target) (copycat.Target, error)
	DeleteTarget(ctx context.Context, actor stacks.Actor, id int64) error
}

// copycat is the copy cataloguing service on the server's database.
func (s *Server) copycat() copycatService { return copycat.NewService(s.DB) }

// copycatPath is the copy cataloguing search page.
const copycatPath = "/cataloguing/copy"

// copycatMaxRecords is how many records the page takes from each target.
const copycatMaxRecords = 10

// copycatRoutes mounts copy cataloguing: searching the targets, importing a
// result. Every member of staff may catalogue. Adding its copies is the item
// form's (recordEditRoutes).
func (s *Server) copycatRoutes(r chi.Router) {
	r.Get(copycatPath, s.handleCopycatSearch)
	r.Post(copycatPath+"/import", s.handleCopycatImport)
}

// CopycatView is the copy cataloguing page: the search form as typed and,
// after a search, each target's answer.
type CopycatView struct {
	Field copycat.Field
	Term  string
	Error string
	// Note is what the search's term calls for (copycat.Query.Note).
	Note    string
	Results []CopycatResult
	// Searched is set when Results answer a search (even an empty one).
	Searched bool
	IsAdmin  bool
}

// CopycatResult is one target's answer as the page shows it.
type CopycatResult struct {
	copycat.Result
	Records []CopycatRecord
}

// CopycatRecord is one record found: its card, its MARC as lines in the MARC
// editor's notation (marc.FormatLines: "=245  10$aTitle :$bsubtitle"), and
// the MARCXML the import form carries.
type CopycatRecord struct {
	Bib   catalog.Bib
	Lines []string
	XML   string
}

func newCopycatRecord(rec *marc.Record) (CopycatRecord, bool) {
	xml, err := marc.ToXML(rec)
	if err != nil {
		return CopycatRecord{}, false
	}
	return CopycatRecord{Bib: catalog.BibOf(rec), Lines: marc.FormatLines(rec), XML: xml}, true
}

// copycatFields are the search's fields, in the form's order.
var copycatFields = []struct {
	Field copycat.Field
	Label string
}{{copycat.ISBN, "ISBN"}, {copycat.Title, "Title"}, {copycat.Author, "Author"}}

func (s *Server) handleCopycatSearch(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	v := &CopycatView{Field: copycat.Field(r.URL.Query().Get("by")), Term: r.URL.Query().Get("q"), IsAdmin: u != nil && u.IsAdmin()}
	if v.Field == "" {
		v.Field = copycat.ISBN
	}
	page := s.page(r, "Copy cataloguing", "search")
	if strings.TrimSpace(v.Term) == "" {
		s.Render(w, r, http.StatusOK, CopycatPage(page, v))
		return
	}
	q, err := copycat.NewQuery(v.Field, v.Term)
	if err != nil {
		v.Error = stacks.ErrorMessage(err)
		s.Render(w, r, http.StatusUnprocessableEntity, CopycatPage(page, v))
		return
	}
	v.Term, v.Note = q.Term, q.Note
	results, err := s.copycat().Search(r.Context(), q, copycatMaxRecords)
	if err != nil {
		if stacks.ErrorCode(err) != stacks.ECONFLICT {
			s.Error(w, r, err)
			return
		}
		v.Error = stacks.ErrorMessage(err)
		s.Render(w, r, http.StatusConflict, CopycatPage(page, v))
		return
	}
	v.Searched = true
	for _, res := range results {
		cr := CopycatResult{Result: res}
		for _, rec := range res.Records {
			if c, ok := newCopycatRecord(rec); ok {
				cr.Records = append(cr.Records, c)
			}
		}
		v.Results = append(v.Results, cr)
	}
	s.Render(w, r, http.StatusOK, CopycatPage(page, v))
}

// CopycatMatchView asks what to do with a record that matches existing ones.
type CopycatMatchView struct {
	Record  CopycatRecord
	Origin  string
	Matches []copycat.Match
}

// handleCopycatImport imports the record the results page's form carries. A
// record that matches existing ones is not imported: the page asks to overlay
// one or to add it anyway. Once imported, the item form takes the first copy's
// barcode.
func (s *Server) handleCopycatImport(w http.ResponseWriter, r *http.Request) {
	rec, err := copycat.RecordFromXML(r.PostFormValue("marc"))
	if err != nil {
		s.Error(w, r, err)
		return
	}
	origin := strings.TrimSpace(r.PostFormValue("target"))
	mode := copycat.ImportIfNew
	var overlay int64
	switch r.PostFormValue("mode") {
	case "add":
		mode = copycat.ImportAdd
	case "overlay":
		mode = copycat.ImportOverlay
		if overlay, err = strconv.ParseInt(r.PostFormValue("record"), 10, 64); err != nil || overlay <= 0 {
			s.Error(w, r, stacks.Errorf(stacks.EINVALID, "Choose the record to overlay."))
			return
		}
	}
	res, err := s.copycat().Import(r.Context(), userFrom(r.Context()).Actor(), rec, origin, mode, overlay)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if len(res.Matches) > 0 {
		c, _ := newCopycatRecord(rec)
		v := &CopycatMatchView{Record: c, Origin: origin, Matches: res.Matches}
		s.Render(w, r, http.StatusOK, CopycatMatchPage(s.page(r, "Record already in the catalogue?", "search"), v))
		return
	}
	title := recordEditShortTitle(catalog.BibOf(rec).Title)
	if res.Created {
		s.Flash(r, "ok", fmt.Sprintf("%q is imported from %s as a new record. Scan the barcode of its first copy.", title, copycatOrigin(origin)))
	} else {
		s.Flash(r, "ok", fmt.Sprintf("Record %d is overlaid with %q from %s; its copies and holds are kept. Scan the barcode of a new copy, or leave.", res.RecordID, title, copycatOrigin(origin)))
	}
	redirect(w, r, itemNewURL(res.RecordID), http.StatusSeeOther)
}

// copycatMatchNote says what a record to import matched in the catalogue and
// what the cataloguer can do about it: overlay the existing record (its MARC is
// replaced, its copies and holds stay) or add the record as a new one.
func copycatMatchNote(v *CopycatMatchView) string {
	what := fmt.Sprintf("%d records already in the catalogue; the table below says what matched each", len(v.Matches))
	which := "one of them"
	if len(v.Matches) == 1 {
		m := v.Matches[0]
		what = fmt.Sprintf("record %d, %q, already in the catalogue: matched by %s", m.RecordID, recordEditShortTitle(m.Title), m.Reason)
		which = "that record"
	}
	return fmt.Sprintf("The record from %s matches %s. Overlay %s with it (its MARC is replaced; its copies and holds stay), or add it as a new record.",
		copycatOrigin(v.Origin), what, which)
}

func copycatOrigin(origin string) string {
	if origin == "" {
		return "copy cataloguing"
	}
	return origin
}

// copycatElapsed shows how long a target took: "0.3 s".
func copycatElapsed(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// copycatHits says how many records a target found and shows.
func copycatHits(r CopycatResult) string {
	switch {
	case r.Total == 0:
		return "No records found"
	case r.Total == 1:
		return "1 record found"
	case r.Total > len(r.Records):
		return fmt.Sprintf("%d records found; the first %d shown", r.Total, len(r.Records))
	}
	return fmt.Sprintf("%d records found", r.Total)
}

// copycatResultID is the id of a target's heading on the results page.
func copycatResultID(i int) string { return "target-" + strconv.Itoa(i) }

// copycatYear shows a year of publication, "" when unknown.
func copycatYear(y int) string {
	if y <= 0 {
		return ""
	}
	return strconv.Itoa(y)
}

// copycatSearched says how many targets a search asked: "1 catalogue
// searched.", "3 catalogues searched."
func copycatSearched(n int) string {
	if n == 1 {
		return "1 catalogue searched."
	}
	return strconv.Itoa(n) + " catalogues searched."
}
