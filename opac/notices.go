package opac

import (
	"context"
	"net/http"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/notices"
)

// noticeChoicesService is what the notices page needs of package notices.
type noticeChoicesService interface {
	PatronChoices(ctx context.Context, patronID int64, email string) ([]notices.Preference, error)
	SetPatronChoices(ctx context.Context, actor stacks.Actor, patronID int64, email string, choices map[string]string) error
}

// newNoticeChoices is the notices service the page uses, on the server's
// preference cache.
func newNoticeChoices(d *db.DB, prefs *library.PreferenceCache) noticeChoicesService {
	return notices.NewService(d, prefs)
}

// noticesForm reads the patron's notice choices (package notices: the same
// choices staff see on the patron page), one statement.
func (s *Server) noticesForm(r *http.Request) (NoticesForm, error) {
	me := patronFrom(r.Context())
	f := NoticesForm{Email: me.Email}
	prefs, err := s.notices.PatronChoices(r.Context(), me.ID, me.Email)
	for _, p := range prefs {
		f.Choices = append(f.Choices, NoticeChoice{Kind: p.Kind, Label: p.Label, Delivery: p.Delivery})
	}
	return f, err
}

func (s *Server) handleNoticesForm(w http.ResponseWriter, r *http.Request) {
	f, err := s.noticesForm(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Render(w, r, http.StatusOK, NoticesPage(s.page(r, "Notices", "account"), f))
}

// handleNoticesSave stores the patron's choices with notices.SetPatronPreferences
// (audited as opac:<card>); email cannot be chosen without an address.
func (s *Server) handleNoticesSave(w http.ResponseWriter, r *http.Request) {
	me := patronFrom(r.Context())
	choices := map[string]string{}
	for _, k := range notices.Kinds {
		if v := r.PostForm.Get("notice_" + k.Trigger); v != "" {
			choices[k.Trigger] = v
		}
	}
	err := s.notices.SetPatronChoices(r.Context(), actor(me), me.ID, me.Email, choices)
	if stacks.ErrorCode(err) == stacks.EINVALID {
		f, ferr := s.noticesForm(r)
		if ferr != nil {
			s.Error(w, r, ferr)
			return
		}
		f.Error = "Choose, for each kind of notice, by email, by post or do not send. Email needs an address: give yours at the desk."
		s.Render(w, r, http.StatusUnprocessableEntity, NoticesPage(s.page(r, "Notices", "account"), f))
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.Flash(r, "ok", "Your notice choices are saved.")
	redirect(w, r, "/account", http.StatusSeeOther)
}
