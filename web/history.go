package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
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

func (s *Server) handleItemHistory(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no item at "+r.URL.Path+". Find it with Search.")
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
	err = s.DB.Read(r.Context(), func(tx *db.Tx) (err error) {
		if v.Item, err = catalog.FindItemDetails(tx, id); err != nil {
			return err
		}
		v.History, err = circulation.ItemHistory(tx, id, historyShown)
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, ItemHistoryPage(s.page(r, "History of "+v.Item.Barcode, "search"), v))
}

func (s *Server) handlePatronHistory(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "There is no patron at "+r.URL.Path+". Find the patron on the Patrons page.")
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
	err = s.DB.Read(r.Context(), func(tx *db.Tx) (err error) {
		if v.Patron, err = patrons.FindByID(tx, id); err != nil {
			return err
		}
		v.History, err = circulation.PatronHistory(tx, id, historyShown)
		return err
	})
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, PatronHistoryPage(s.page(r, "Loan history of "+v.Patron.Name(), "patrons"), v))
}

// returned shows when a loan ended, "on loan" while it has not.
func returned(l circulation.HistoryLoan, loc *time.Location) string {
	if l.Current() {
		return "On loan"
	}
	return formatDate(l.ReturnedAt, loc)
}
