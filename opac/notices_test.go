package opac_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/notices"
)

// TestNoticePreferences: a patron chooses, per kind of notice, email, print or
// none in My account; the choices are the ones staff see (package notices).
func TestNoticePreferences(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	e.signIn(t, c, "P0001")
	p := e.patron(t, "P0001")
	if p.Email == "" {
		t.Fatal("the demo's P0001 has no email address")
	}
	prefs := func(t *testing.T, id int64, email string) map[string]string {
		t.Helper()
		out := map[string]string{}
		err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
			pn, err := notices.FindPatronNotices(tx, id, email, 0)
			for _, pr := range pn.Preferences {
				out[pr.Kind] = pr.Delivery
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	t.Run("OK", func(t *testing.T) {
		r := e.get(t, c, "/account/notices")
		if r.Status != http.StatusOK || strings.Count(r.Body, "<fieldset") != len(notices.Kinds) || !strings.Contains(text(r.Body), "Hold available") {
			t.Fatalf("notices page: %d\n%s", r.Status, text(r.Body))
		}
		if n := statements(t, r); n >= 10 {
			t.Errorf("notices page: %d statements", n)
		}
		form := url.Values{"notice_" + notices.TriggerHoldAvailable: {"email"}, "notice_" + notices.TriggerOverdue: {"print"}, "notice_" + notices.TriggerPredue: {"none"}}
		r = e.follow(t, c, e.post(t, c, "/account/notices", form))
		if !strings.Contains(text(r.Body), "Your notice choices are saved.") {
			t.Errorf("no confirmation:\n%s", text(r.Body))
		}
		got := prefs(t, p.ID, p.Email)
		if got[notices.TriggerHoldAvailable] != "email" || got[notices.TriggerOverdue] != "print" || got[notices.TriggerPredue] != "none" {
			t.Errorf("stored choices %v", got)
		}
		if body := e.get(t, c, "/account/notices").Body; !strings.Contains(body, `name="notice_predue" value="none" checked`) {
			t.Errorf("the page does not show the choice:\n%s", body)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		r := e.post(t, c, "/account/notices", url.Values{"notice_" + notices.TriggerOverdue: {"carrier pigeon"}})
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, `role="alert"`) {
			t.Errorf("an unknown delivery: %d\n%s", r.Status, text(r.Body))
		}
	})
	t.Run("ErrEmailWithoutAddress", func(t *testing.T) {
		c := e.client()
		e.signIn(t, c, "P0003")
		p3 := e.patron(t, "P0003")
		err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE patrons SET email = '' WHERE id = ?`, p3.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if body := e.get(t, c, "/account/notices").Body; strings.Contains(body, `value="email"`) {
			t.Error("email offered to a patron without an address")
		}
		r := e.post(t, c, "/account/notices", url.Values{"notice_" + notices.TriggerOverdue: {"email"}})
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("email without an address: %d", r.Status)
		}
	})
}
