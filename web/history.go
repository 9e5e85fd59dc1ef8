package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/patrons"
)

// historyShown is how many loans a history page shows.
const historyShown = 200

func itemHistoryURL(id int64) string   { return "/items/" + strconv.FormatInt(id, 10) + "/history" }
func patronHistoryURL(id int64) string { return patronURL(id) + "/history" }

// HistoryView is an item's or a patron's circulation history.
type HistoryView struct {
	Item    *catalog.ItemDetails
	Patron  *patrons.Patron
	History circulation.History
	Loc     *time.Location
}

// historyService is what the history pages ask of circulation: each reads as a
// heavy read, answered with heavyError.
type historyService interface {
	ItemLoanHistory(ctx context.Context, itemID int64, limit int) (*catalog.ItemDetails, circulation.History, error)
	PatronLoanHistory(ctx context.Context, patronID int64, limit int) (*patrons.Patron, circulation.History, error)
}

func (s *Server) handleItemHistory(w http.ResponseWriter, r *http.Request) {
	s.history(w, r, "There is no item at "+r.URL.Path+". Find it with Search.",
		func(ctx context.Context, id int64, v *HistoryView) (err error) {
			v.Item, v.History, err = s.Circ.ItemLoanHistory(ctx, id, historyShown)
			return err
		},
		func(v HistoryView) templ.Component {
			return ItemHistoryPage(s.page(r, "History of "+v.Item.Barcode, "search"), v)
		})
}

func (s *Server) handlePatronHistory(w http.ResponseWriter, r *http.Request) {
	s.history(w, r, "There is no patron at "+r.URL.Path+". Find the patron on the Patrons page.",
		func(ctx context.Context, id int64, v *HistoryView) (err error) {
			v.Patron, v.History, err = s.Circ.PatronLoanHistory(ctx, id, historyShown)
			return err
		},
		func(v HistoryView) templ.Component {
			return PatronHistoryPage(s.page(r, "Loan history of "+v.Patron.Name(), "patrons"), v)
		})
}

// history serves an item's or a patron's history page: the id from the path
// (notFound if it is not one), the library's time zone, what load reads (a heavy
// read), then the page.
func (s *Server) history(w http.ResponseWriter, r *http.Request, notFound string,
	load func(ctx context.Context, id int64, v *HistoryView) error, page func(HistoryView) templ.Component) {
	id, err := pathID(r, notFound)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	prefs, err := s.preferences(r.Context())
	if err != nil {
		s.Error(w, r, err)
		return
	}
	v := HistoryView{Loc: prefs.Location}
	if err := load(r.Context(), id, &v); err != nil {
		s.heavyError(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, page(v))
}

// returned shows when a loan ended, "on loan" while it has not.
func returned(l circulation.HistoryLoan, loc *time.Location) string {
	if l.Current() {
		return "On loan"
	}
	return formatDate(l.ReturnedAt, loc)
}
