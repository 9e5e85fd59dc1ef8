package opac

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// endSessionsOf deletes every session signed in as patron pid, in tx: a changed
// PIN signs the patron out everywhere else.
func endSessionsOf(tx *db.Tx, pid int64) error {
	_, err := tx.Exec(`DELETE FROM opac_sessions WHERE `+db.SessionValue(tx, sessPatronID)+` = ?`, pid)
	return err
}

// DeleteExpiredSessions removes expired patrons' sessions; the server runs it
// periodically.
func DeleteExpiredSessions(ctx context.Context, d *db.DB) (int64, error) {
	var n int64
	err := d.Write(ctx, func(tx *db.Tx) error {
		res, err := tx.Exec(`DELETE FROM opac_sessions WHERE expiry <= ?`, db.FormatTime(time.Now()))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// sessionCodec stores a session as a small JSON document (numbers and flash
// messages are all a patron's session holds); scs's gob codec is much slower.
type sessionCodec struct{}

type sessionData struct {
	Deadline time.Time          `json:"d"`
	Ints     map[string]int64   `json:"i,omitempty"`
	Flashes  map[string][]Flash `json:"f,omitempty"`
}

func (sessionCodec) Encode(deadline time.Time, values map[string]any) ([]byte, error) {
	d := sessionData{Deadline: deadline}
	for k, v := range values {
		switch v := v.(type) {
		case int64:
			if d.Ints == nil {
				d.Ints = map[string]int64{}
			}
			d.Ints[k] = v
		case []Flash:
			if d.Flashes == nil {
				d.Flashes = map[string][]Flash{}
			}
			d.Flashes[k] = v
		default:
			return nil, fmt.Errorf("session value %q: type %T is not stored by sessionCodec", k, v)
		}
	}
	return json.Marshal(d)
}

func (sessionCodec) Decode(b []byte) (time.Time, map[string]any, error) {
	if !bytes.HasPrefix(b, []byte("{")) {
		return time.Time{}, nil, errors.New("opac session: not JSON")
	}
	var d sessionData
	if err := json.Unmarshal(b, &d); err != nil {
		return time.Time{}, nil, err
	}
	values := make(map[string]any, len(d.Ints)+len(d.Flashes))
	for k, v := range d.Ints {
		values[k] = v
	}
	for k, v := range d.Flashes {
		values[k] = v
	}
	return d.Deadline, values, nil
}
