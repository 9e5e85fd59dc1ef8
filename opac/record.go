package opac

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/kit"
)

// RecordView is a record page.
type RecordView struct {
	Record *catalog.Record
	// Copies are the copies a patron may see: all but the withdrawn.
	Copies []catalog.CopyStatus
	// Queue is how many holds are open on the record.
	Queue int
	// Holdable: at least one copy can be lent, so a hold can be filled.
	Holdable  bool
	Permalink string
}

// pathID reads the {id} of the URL; anything but a positive number is a 404.
func pathID(r *http.Request, what string) (int64, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, stacks.Errorf(stacks.ENOTFOUND, "There is no %s at %s.", what, r.URL.Path)
	}
	return id, nil
}

// baseURL is the public address of the site's root for permanent links and
// OAI-PMH, without a trailing slash: Config.BaseURL if it has a path (it then
// names the root, sub-path included, as the proxy publishes it), else
// Config.BaseURL or the request's own scheme and host, followed by the
// request's base path ("https://example.org" + "/catalogue").
func (s *Server) baseURL(r *http.Request) string {
	base := basepath.From(r.Context())
	if s.cfg.BaseURL != "" {
		u := strings.TrimSuffix(s.cfg.BaseURL, "/")
		if p, err := url.Parse(u); err == nil && p.Path != "" {
			return u
		}
		return u + base
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + base
}

// copyStatus is how a patron reads a copy that is not on the shelf.
func copyStatus(p *Page, c catalog.CopyStatus) string {
	switch c.Status {
	case catalog.StatusOnLoan:
		if c.DueAt.Valid {
			return "On loan until " + p.Day(c.DueAt.Time)
		}
		return "On loan"
	case catalog.StatusOnHoldShelf:
		return "On the hold shelf for another reader"
	case catalog.StatusInTransit:
		return "On its way between libraries"
	}
	return "Not available"
}

func (s *Server) handleRecord(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "record")
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := &RecordView{}
	var copies []catalog.CopyStatus
	v.Record, copies, v.Queue, err = s.Circ.RecordWithQueueLength(r.Context(), id)
	if err != nil {
		if stacks.ErrorCode(err) == stacks.ENOTFOUND {
			// A record merged into another: its permanent link leads there.
			if to, rerr := s.Catalog.RecordRedirect(r.Context(), id); rerr == nil && to != 0 {
				kit.Redirect(w, r, recordURL(to), http.StatusMovedPermanently)
				return
			}
			err = stacks.Errorf(stacks.ENOTFOUND, "The catalogue has no record %d. It may have been removed: search for the title instead.", id)
		}
		s.Error(w, r, err)
		return
	}
	for _, c := range copies {
		if c.Status == catalog.StatusWithdrawn {
			continue
		}
		v.Copies = append(v.Copies, c)
		v.Holdable = v.Holdable || !c.NotForLoan
	}
	v.Permalink = s.baseURL(r) + recordURL(id)
	p := s.page(r, v.Record.Title, "search")
	p.Canonical = v.Permalink
	s.Render(w, r, http.StatusOK, RecordPage(p, v))
}
