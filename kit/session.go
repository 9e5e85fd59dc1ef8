package kit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/stacks-ils/stacks/db"
)

// Sessions describes a site's scs session manager.
type Sessions struct {
	DB *db.DB
	// Table is the site's sessions table.
	Table string
	Codec scs.Codec
	// Lifetime is the absolute lifetime of a sign-in.
	Lifetime time.Duration
	// Cookie is the session cookie's name: each site has its own, so that the
	// two never read each other's sessions even on one host name.
	Cookie string
	// Secure marks the cookie Secure (served over TLS).
	Secure bool
	// BrowserSession makes the cookie a session cookie, without Max-Age or
	// Expires: closing the browser ends the sign-in.
	BrowserSession bool
	// Logger logs a session that could not be read or saved.
	Logger *slog.Logger
}

// New returns the session manager. Its cookie's path is "/": basepath.Sessions
// puts it under the request's base path.
func (c Sessions) New() *scs.SessionManager {
	sm := scs.New()
	sm.Store = &db.SessionStore{DB: c.DB, Table: c.Table}
	sm.Codec = c.Codec
	sm.Lifetime = c.Lifetime
	// scs's own IdleTimeout rewrites the session on every request (a durable
	// commit each time); each site implements its idle timeout with a "seen"
	// stamp refreshed at most once a minute instead.
	sm.IdleTimeout = 0
	sm.Cookie.Name = c.Cookie
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = c.Secure
	sm.Cookie.Path = "/"
	sm.Cookie.Persist = !c.BrowserSession
	logger, table := c.Logger, c.Table
	sm.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) {
		logger.Error("session", "table", table, "err", err, "path", r.URL.Path)
		http.Error(w, "Your session could not be read or saved; please try again.", http.StatusInternalServerError)
	}
	return sm
}

// DeleteExpiredSessions removes the expired sessions of table. A server runs it
// periodically; CGI processes never do (they live for one request).
func DeleteExpiredSessions(ctx context.Context, d *db.DB, table string) (int64, error) {
	var n int64
	err := d.Write(ctx, func(tx *db.Tx) error {
		res, err := tx.Exec(`DELETE FROM `+table+` WHERE expiry <= ?`, db.FormatTime(time.Now()))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// Flash is a one-off message shown at the top of the next page.
type Flash struct {
	Kind string // ok, info, warn, error
	Text string
}

// FlashKey is the session key of the queued flashes.
const FlashKey = "flash"

// AddFlash queues a message for the next page the session of ctx sees.
func AddFlash(ctx context.Context, sm *scs.SessionManager, kind, text string) {
	fs, _ := sm.Get(ctx, FlashKey).([]Flash)
	sm.Put(ctx, FlashKey, append(fs, Flash{Kind: kind, Text: text}))
}

// TakeFlashes returns the queued messages and forgets them; it writes the
// session only if there were any.
func TakeFlashes(ctx context.Context, sm *scs.SessionManager) []Flash {
	if !sm.Exists(ctx, FlashKey) {
		return nil
	}
	fs, _ := sm.Pop(ctx, FlashKey).([]Flash)
	return fs
}

// SessionCodec stores a session as a small JSON document with one map per kind
// of value a site keeps: numbers, strings, flashes, and the site's own V (the
// staff desk's visit). scs's gob codec builds a new decoder, and compiles it
// for every type, on every request: under load that was 9 % of the staff
// server's CPU. A session written by the gob codec is still read.
type SessionCodec[V any] struct{}

type sessionData[V any] struct {
	Deadline time.Time          `json:"d"`
	Ints     map[string]int64   `json:"i,omitempty"`
	Strings  map[string]string  `json:"s,omitempty"`
	Values   map[string]V       `json:"v,omitempty"`
	Flashes  map[string][]Flash `json:"f,omitempty"`
}

// Encode implements scs.Codec.
func (SessionCodec[V]) Encode(deadline time.Time, values map[string]any) ([]byte, error) {
	d := sessionData[V]{Deadline: deadline}
	for k, v := range values {
		switch v := v.(type) {
		case int64:
			d.Ints = put(d.Ints, k, v)
		case string:
			d.Strings = put(d.Strings, k, v)
		case V:
			d.Values = put(d.Values, k, v)
		case []Flash:
			d.Flashes = put(d.Flashes, k, v)
		default:
			// A programming error: a new kind of session value needs a map here.
			return nil, fmt.Errorf("session value %q: type %T is not stored by the session codec", k, v)
		}
	}
	return json.Marshal(d)
}

// Decode implements scs.Codec.
func (SessionCodec[V]) Decode(b []byte) (time.Time, map[string]any, error) {
	if !bytes.HasPrefix(b, []byte("{")) {
		return scs.GobCodec{}.Decode(b)
	}
	var d sessionData[V]
	if err := json.Unmarshal(b, &d); err != nil {
		return time.Time{}, nil, err
	}
	values := make(map[string]any, len(d.Ints)+len(d.Strings)+len(d.Values)+len(d.Flashes))
	for k, v := range d.Ints {
		values[k] = v
	}
	for k, v := range d.Strings {
		values[k] = v
	}
	for k, v := range d.Values {
		values[k] = v
	}
	for k, v := range d.Flashes {
		values[k] = v
	}
	return d.Deadline, values, nil
}

func put[V any](m map[string]V, k string, v V) map[string]V {
	if m == nil {
		m = map[string]V{}
	}
	m[k] = v
	return m
}
