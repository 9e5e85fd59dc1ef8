package opac

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// SearchView is the search page: what was typed, where to look, the query the
// engine runs, and its results with their availability by branch.
type SearchView struct {
	// Text is what the patron typed; In, the field chosen ("" anywhere).
	Text string
	In   string
	// Query is the staff search's query: Text within the field In.
	Query        catalog.SearchQuery
	PerPage      int
	Error        string
	Result       *catalog.SearchResult
	Availability map[int64][]catalog.BranchAvailability
}

// searchField is a choice of "Look in".
type searchField struct{ Value, Label string }

// searchIn are the fields a patron can search within: the staff search's field
// searches (catalog.MatchExpression's "title:", "author:", ...).
var searchIn = []searchField{{"", "Anywhere"}, {"title", "Title"}, {"author", "Author"}, {"subject", "Subject"}, {"isbn", "ISBN"}}

// perPage is the number of results a page.
const perPage = 20

// searchView reads the search from the URL's query.
func searchView(qv url.Values) *SearchView {
	page, _ := strconv.Atoi(qv.Get("page"))
	v := &SearchView{Text: strings.TrimSpace(qv.Get("q")), In: qv.Get("in"), PerPage: perPage}
	known := false
	for _, f := range searchIn {
		known = known || f.Value == v.In
	}
	if !known {
		v.In = ""
	}
	text := v.Text
	if v.In != "" && text != "" {
		text = v.In + ":" + text
	}
	sort := qv.Get("sort")
	if sort != "title" && sort != "year" {
		sort = ""
	}
	v.Query = catalog.SearchQuery{Text: text, Sort: sort, ItemType: qv.Get("type"), Branch: qv.Get("branch"),
		Available: qv.Get("available") != "", Page: max(page, 1), PerPage: perPage, NoBarcode: true, ByBranch: true}
	return v
}

// url is the search URL of the view's query changed by change: links keep every
// other choice, and go back to the first page.
func (v *SearchView) url(change func(q *catalog.SearchQuery)) string {
	q := v.Query
	q.Page = 1
	change(&q)
	vals := q.Values()
	vals.Set("q", v.Text)
	if v.In != "" {
		vals.Set("in", v.In)
	}
	return "/search?" + vals.Encode()
}

func (v *SearchView) pageURL(page int) string {
	return v.url(func(q *catalog.SearchQuery) { q.Page = page })
}

func (v *SearchView) filtered() bool {
	return v.Query.ItemType != "" || v.Query.Branch != "" || v.Query.Available
}

func searchURL(text string) string { return "/search?" + url.Values{"q": {text}}.Encode() }

func recordURL(id int64) string { return "/records/" + strconv.FormatInt(id, 10) }

// totalCount says how many records match res's words: resultCount, or "More
// than 10000 results" past catalog.ListLimit, where the search stops counting
// (TotalOver).
func totalCount(res *catalog.SearchResult) string {
	if res.TotalOver {
		return "More than " + strconv.Itoa(catalog.ListLimit) + " results"
	}
	return resultCount(res.Total)
}

func resultCount(n int) string {
	if n == 1 {
		return "1 result"
	}
	return strconv.Itoa(n) + " results"
}

func onShelf(n int) string {
	if n == 1 {
		return "1 on the shelf"
	}
	return strconv.Itoa(n) + " on the shelf"
}

func boolAttr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// catalogService is what the OPAC needs of catalog.Service: the search, and
// the OAI-PMH repository's reads (oaiService).
type catalogService interface {
	oaiService
	// Search runs a search bounded in time (Config.SearchTimeout) and in
	// searches at once (db.ErrBusy).
	Search(ctx context.Context, q catalog.SearchQuery) (catalog.SearchResult, error)
	// RecordRedirect names the record a merged one was merged into (0 if none).
	RecordRedirect(ctx context.Context, id int64) (int64, error)
}

// newCatalogService is the catalogue's service for a Server with cfg.
func newCatalogService(cfg Config) catalogService {
	return catalog.NewService(cfg.DB, catalog.Timeouts{Search: cfg.SearchTimeout, Harvest: cfg.OAITimeout})
}

func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	s.Render(w, r, http.StatusOK, HomePage(s.page(r, "Catalogue", "search"), &SearchView{}))
}

// handleSearch runs the staff search's engine (catalog.Search, bounded in time
// and in searches at once), reading the page's availability by branch with its
// records, and no barcode look-up (patrons do not search by barcode).
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	v := searchView(r.URL.Query())
	if v.Text == "" {
		s.Render(w, r, http.StatusOK, SearchPage(s.page(r, "Search", "search"), v))
		return
	}
	fail := func(status int, msg string) {
		v.Error = msg
		s.Render(w, r, status, SearchPage(s.page(r, "Search", "search"), v))
	}
	if err := v.Query.Check(); err != nil {
		fail(http.StatusUnprocessableEntity, patronSearchMessage(err))
		return
	}
	res, err := s.Catalog.Search(r.Context(), v.Query)
	v.Availability = res.Availability
	switch {
	case errors.Is(err, db.ErrBusy):
		w.Header().Set("Retry-After", "1")
		fail(http.StatusServiceUnavailable, "Many people are searching at once: please search again in a moment.")
	case err == nil:
		v.Result = &res
		s.Render(w, r, http.StatusOK, SearchPage(s.page(r, "Search: "+v.Text, "search"), v))
	case stacks.ErrorCode(err) == stacks.EINVALID:
		fail(http.StatusUnprocessableEntity, patronSearchMessage(err))
	default:
		s.Error(w, r, err)
	}
}

// patronSearchMessage words the engine's refusals for patrons: the engine's
// messages mention barcodes, which patrons do not search by.
func patronSearchMessage(err error) string {
	msg := stacks.ErrorMessage(err)
	if strings.Contains(msg, "or a barcode") {
		return "Type a word of the title, author or subject, or an ISBN."
	}
	return msg
}
