package opac

import (
	"net/http"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/notices"
)

// noticesForm reads the patron's notice choices (package notices: the same
// choices staff see on the patron page), one statement.
func (s *Server) noticesForm(r *http.Request) (NoticesForm, error) {
	me := patronFrom(r.Context())
	f := NoticesForm{Email: me.Email}
	err := s.DB.Read(r.Context(), func(tx *db.Tx) error {
		pn, err := notices.FindPatronNotices(tx, me.ID, me.Email, 0)
		for _, p := range pn.Preferences {
			f.Choices = append(f.Choices, NoticeChoice{Kind: p.Kind, Label: p.Label, Delivery: p.Delivery})
		}
		return err
	})
	return f, err
}

func (s *Server) handleNoticesForm(w http.ResponseWriter, r *http.Request) {
	f, err := s.noticesForm(r)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, NoticesPage(s.page(r, "Notices", "account"), f))
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
	err := s.DB.Write(r.Context(), func(tx *db.Tx) error {
		return notices.SetPatronPreferences(tx, actor(me), me.ID, me.Email, choices)
	})
	if stacks.ErrorCode(err) == stacks.EINVALID {
		f, ferr := s.noticesForm(r)
		if ferr != nil {
			s.Error(w, r, ferr)
			return
		}
		f.Error = "Choose, for each kind of notice, by email, by post or do not send. Email needs an address: give yours at the desk."
		s.render(w, r, http.StatusUnprocessableEntity, NoticesPage(s.page(r, "Notices", "account"), f))
		return
	} else if err != nil {
		s.Error(w, r, err)
		return
	}
	s.flash(r, "ok", "Your notice choices are saved.")
	redirect(w, r, "/account", http.StatusSeeOther)
}
