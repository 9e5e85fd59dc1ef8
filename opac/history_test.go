package opac_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestKeepHistory: a patron chooses in My account to keep their loan history,
// and can change their mind; the choice is stored, shown, and audited.
func TestKeepHistory(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	e.signIn(t, c, "P0001")
	if body := e.get(t, c, "/account").Body; !strings.Contains(body, `action="/account/history"`) || strings.Contains(body, `name="keep_history" value="1" checked`) {
		t.Fatal("My account lacks the loan history form, or shows it ticked")
	}
	r := e.follow(t, c, e.post(t, c, "/account/history", url.Values{"keep_history": {"1"}}))
	if r.Status != http.StatusOK || !strings.Contains(text(r.Body), "will keep the list of what you borrow") {
		t.Errorf("after ticking: %d\n%s", r.Status, text(r.Body))
	}
	if !strings.Contains(r.Body, `name="keep_history" value="1" checked`) || !e.patron(t, "P0001").KeepHistory {
		t.Error("the choice is not stored or not shown")
	}
	e.follow(t, c, e.post(t, c, "/account/history", url.Values{}))
	if e.patron(t, "P0001").KeepHistory {
		t.Error("unticking did not clear the choice")
	}
	if e.patron(t, "P0002").KeepHistory {
		t.Error("another patron's choice changed")
	}
}
