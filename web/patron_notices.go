package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/notices"
	"github.com/stacks-ils/stacks/patrons"
)

// patronNoticesShown is how many of a patron's latest notices the page lists.
const patronNoticesShown = 10

// PatronNoticesView is the patron page's Notices section: how the patron wants
// each kind of notice, and the notices sent lately.
type PatronNoticesView struct {
	PatronID int64
	HasEmail bool
	notices.PatronNotices
	Location *time.Location
	Errors   FormErrors
}

// patronNoticesView is the section for the patron's notices and choices.
func patronNoticesView(p *patrons.Patron, pn notices.PatronNotices, loc *time.Location) *PatronNoticesView {
	return &PatronNoticesView{PatronID: p.ID, HasEmail: strings.TrimSpace(p.Email) != "", PatronNotices: pn, Location: loc, Errors: FormErrors{}}
}

// handlePatronNoticePreferences saves the patron's delivery for each kind of
// notice.
func (s *Server) handlePatronNoticePreferences(w http.ResponseWriter, r *http.Request) {
	choices := map[string]string{}
	for _, k := range notices.Kinds {
		if v := r.PostFormValue("notice_" + k.Trigger); v != "" {
			choices[k.Trigger] = v
		}
	}
	s.patronAction(w, r, "notices", nil, func(actor stacks.Actor, id int64) (string, error) {
		p, err := s.patrons.page.SetPatronNoticeChoices(r.Context(), actor, id, choices)
		if err != nil {
			return "", err
		}
		return "Notice choices saved for " + p.Name() + ".", nil
	})
}

// deliveryLabel names a delivery for people.
func deliveryLabel(d string) string {
	switch d {
	case notices.DeliveryEmail:
		return "Email"
	case notices.DeliveryPrint:
		return "Print"
	case notices.DeliveryNone:
		return "None"
	}
	return d
}

// noticeKinds names a message's kinds: "Overdue, Due soon".
func noticeKinds(kinds []string) string {
	var out []string
	for _, k := range kinds {
		out = append(out, notices.KindLabel(k))
	}
	return strings.Join(out, ", ")
}

// noticeStatus describes a message's state for staff.
func noticeStatus(m notices.Message) string {
	switch {
	case m.Status == notices.StatusSent && m.Delivery == notices.DeliveryPrint:
		return "Printed"
	case m.Status == notices.StatusSent:
		return "Sent"
	case m.Status == notices.StatusFailed:
		return "Failed"
	case m.Status == notices.StatusCancelled:
		return "Not needed"
	case m.Delivery == notices.DeliveryPrint:
		return "To print"
	case m.Attempts > 0:
		return "Waiting to retry"
	}
	return "Queued"
}
