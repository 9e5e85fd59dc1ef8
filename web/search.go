package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// catalogService is what the catalogue's pages need of catalog.Service; each
// page's part is declared beside its handlers.
type catalogService interface {
	searchService
	recordEditService
	catalogMaintenanceService
	importService
	codesService
	RecordWithBranches(ctx context.Context, id int64) (*catalog.Record, []catalog.CopyStatus, []library.Branch, error)
}

// searchService runs a catalogue search, bounded in time (Config.SearchTimeout)
// and in searches at once (db.ErrBusy).
type searchService interface {
	Search(ctx context.Context, q catalog.SearchQuery) (catalog.SearchResult, error)
}

// catalogRoutes mounts the catalogue search and record pages.
func (s *Server) catalogRoutes(r chi.Router) {
	r.Get("/search", s.handleSearch)
	r.Get("/records/{id}", s.handleRecord)
	r.Get("/records/{id}/hold", s.handlePlaceHoldForm)
	r.Post("/records/{id}/hold", s.handlePlaceHold)
	s.copycatRoutes(r)
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	page, _ := strconv.Atoi(qv.Get("page"))
	v := &SearchView{Query: catalog.SearchQuery{
		Text:      qv.Get("q"),
		Sort:      qv.Get("sort"),
		ItemType:  qv.Get("type"),
		Branch:    qv.Get("branch"),
		Available: qv.Get("available") != "",
		Page:      page,
	}}
	if strings.TrimSpace(v.Query.Text) == "" {
		s.Render(w, r, http.StatusOK, SearchPage(s.page(r, "Search", "search"), v))
		return
	}
	// A search over the budget is refused before it waits for a connection,
	// unless it may be a barcode (one word without spaces).
	text := strings.TrimSpace(v.Query.Text)
	if err := v.Query.Check(); err != nil && (strings.ContainsAny(text, " \t") || len(text) > 64) {
		v.Error = stacks.ErrorMessage(err)
		s.Render(w, r, http.StatusUnprocessableEntity, SearchPage(s.page(r, "Search", "search"), v))
		return
	}
	res, err := s.Catalog.Search(r.Context(), v.Query)
	switch {
	case errors.Is(err, db.ErrBusy):
		v.Error = "Many searches are running at once: search again in a moment."
		w.Header().Set("Retry-After", "1")
		s.Render(w, r, http.StatusServiceUnavailable, SearchPage(s.page(r, "Search", "search"), v))
	case err == nil && res.BarcodeRecordID != 0:
		redirect(w, r, recordURL(res.BarcodeRecordID), http.StatusSeeOther)
		return
	case err == nil:
		v.Result = &res
		s.Render(w, r, http.StatusOK, SearchPage(s.page(r, "Search", "search"), v))
	case stacks.ErrorCode(err) == stacks.EINVALID:
		v.Error = stacks.ErrorMessage(err)
		s.Render(w, r, http.StatusUnprocessableEntity, SearchPage(s.page(r, "Search", "search"), v))
	default:
		s.Error(w, r, err)
	}
}

// newCatalogService is the catalogue's service for a Server with cfg.
func newCatalogService(cfg Config) catalogService {
	return catalog.NewService(cfg.DB, catalog.Timeouts{Search: cfg.SearchTimeout})
}
