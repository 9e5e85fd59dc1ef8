package opac_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/opac"
	"github.com/stacks-ils/stacks/stackstest"
)

// TestHoldFormErrors proves that only a record that is not there is "not
// found" on the Place a hold form: a query that fails (here a column the
// query needs is gone, as in a broken upgrade) is a logged 500, not a 404
// that hides the outage.
func TestHoldFormErrors(t *testing.T) {
	e := newEnv(t)
	var logs stackstest.Buffer
	o := opac.New(opac.Config{DB: e.DB, Preferences: library.NewPreferenceCache(true),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	site := &testEnv{DB: e.DB, Clock: e.Clock, Srv: srv, OPAC: o, Circ: e.Circ, Desk: e.Desk}
	c := site.client()
	site.signIn(t, c, "P0003")
	rec := strconv.FormatInt(site.recordOf(t, "I00010"), 10)

	if r := site.get(t, c, "/records/"+rec+"/hold"); r.Status != http.StatusOK {
		t.Fatalf("hold form: %d\n%s", r.Status, text(r.Body))
	}
	r := site.get(t, c, "/records/99999999/hold")
	if r.Status != http.StatusNotFound || !strings.Contains(text(r.Body), "The catalogue has no record 99999999.") {
		t.Errorf("no such record: %d, want 404 saying so\n%s", r.Status, text(r.Body))
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a missing record was logged as an error:\n%s", logs.String())
	}

	if err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`ALTER TABLE records RENAME COLUMN author TO author_gone`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r = site.get(t, c, "/records/"+rec+"/hold")
	if r.Status != http.StatusInternalServerError {
		t.Errorf("hold form with the query failing: %d, want 500\n%s", r.Status, text(r.Body))
	}
	if strings.Contains(text(r.Body), "no record") {
		t.Errorf("a failed query was shown as a missing record:\n%s", text(r.Body))
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "author") {
		t.Errorf("the failure was not logged with its cause:\n%s", l)
	}
}
