package kit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

type visit struct{ PatronID int64 }

// TestSessionCodec: every kind of value a site keeps comes back as it went
// in; a gob session still reads; a kind the codec does not know is an error.
func TestSessionCodec(t *testing.T) {
	deadline := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	values := map[string]any{
		"uid":   int64(7),
		"batch": "b-123",
		"visit": visit{PatronID: 42},
		"flash": []Flash{{Kind: "ok", Text: "Checked out <b>"}},
	}
	var c SessionCodec[visit]
	b, err := c.Encode(deadline, values)
	if err != nil {
		t.Fatal(err)
	}
	gotDeadline, got, err := c.Decode(b)
	if err != nil || !gotDeadline.Equal(deadline) || !reflect.DeepEqual(got, values) {
		t.Errorf("round trip: %v %#v %v", gotDeadline, got, err)
	}
	old, err := scs.GobCodec{}.Encode(deadline, map[string]any{"uid": int64(7)})
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := c.Decode(old); err != nil || got["uid"] != int64(7) {
		t.Errorf("gob session: %#v %v", got, err)
	}
	if _, err := c.Encode(deadline, map[string]any{"n": 3}); err == nil || !strings.Contains(err.Error(), `"n"`) {
		t.Errorf("int value: %v, want an error naming the key", err)
	}
}

// TestSessions: the manager keeps its sessions in the site's table with the
// site's cookie; flashes queued in one request show on the next page once;
// DeleteExpiredSessions removes only the expired sessions of its table.
func TestSessions(t *testing.T) {
	d := dbtest.Open(t, db.Options{})
	logger, _ := logTo()
	sm := Sessions{DB: d, Table: "opac_sessions", Codec: SessionCodec[struct{}]{}, Lifetime: time.Hour,
		Cookie: "site", BrowserSession: true, Logger: logger}.New()
	var flashes []Flash
	h := sm.LoadAndSave(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/add" {
			AddFlash(r.Context(), sm, "ok", "one")
			AddFlash(r.Context(), sm, "info", "two")
			return
		}
		flashes = TakeFlashes(r.Context(), sm)
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/add", nil))
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != "site" || !cookies[0].HttpOnly || cookies[0].MaxAge != 0 || !cookies[0].Expires.IsZero() {
		t.Fatalf("cookie: %+v", cookies)
	}
	for _, want := range [][]Flash{{{"ok", "one"}, {"info", "two"}}, nil} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(cookies[0])
		h.ServeHTTP(httptest.NewRecorder(), r)
		if !reflect.DeepEqual(flashes, want) {
			t.Errorf("flashes %v, want %v", flashes, want)
		}
	}

	ctx := context.Background()
	past := db.FormatTime(time.Now().Add(-time.Minute))
	if err := d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO opac_sessions (token_hash, data, expiry) VALUES ('old', ?, ?)`, []byte("{}"), past)
		if err == nil {
			_, err = tx.Exec(`INSERT INTO sessions (token_hash, data, expiry) VALUES ('staff', ?, ?)`, []byte("{}"), past)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := DeleteExpiredSessions(ctx, d, "opac_sessions"); err != nil || n != 1 {
		t.Errorf("DeleteExpiredSessions: %d %v, want 1 (the live session kept)", n, err)
	}
	if n, err := DeleteExpiredSessions(ctx, d, "sessions"); err != nil || n != 1 {
		t.Errorf("DeleteExpiredSessions of the staff table: %d %v, want 1", n, err)
	}
}
