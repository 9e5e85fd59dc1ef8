package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/alexedwards/scs/v2"
)

// sessionCodec stores session data as a small JSON document with one map per kind
// of value the staff pages keep (numbers, strings, the desk visit, flash
// messages). scs's default gob codec builds a new decoder, and compiles it for
// every type, on every request: under load that was 9 % of the server's CPU.
// Sessions written by the gob codec (before this one) are still read.
type sessionCodec struct{}

type sessionData struct {
	Deadline time.Time            `json:"d"`
	Ints     map[string]int64     `json:"i,omitempty"`
	Strings  map[string]string    `json:"s,omitempty"`
	Visits   map[string]deskVisit `json:"v,omitempty"`
	Flashes  map[string][]Flash   `json:"f,omitempty"`
}

func (sessionCodec) Encode(deadline time.Time, values map[string]any) ([]byte, error) {
	d := sessionData{Deadline: deadline}
	for k, v := range values {
		switch v := v.(type) {
		case int64:
			d.Ints = put(d.Ints, k, v)
		case string:
			d.Strings = put(d.Strings, k, v)
		case deskVisit:
			d.Visits = put(d.Visits, k, v)
		case []Flash:
			d.Flashes = put(d.Flashes, k, v)
		default:
			// A programming error: a new kind of session value needs a map here.
			return nil, fmt.Errorf("session value %q: type %T is not stored by sessionCodec", k, v)
		}
	}
	return json.Marshal(d)
}

func (sessionCodec) Decode(b []byte) (time.Time, map[string]any, error) {
	if !bytes.HasPrefix(b, []byte("{")) {
		return scs.GobCodec{}.Decode(b)
	}
	var d sessionData
	if err := json.Unmarshal(b, &d); err != nil {
		return time.Time{}, nil, err
	}
	values := make(map[string]any, len(d.Ints)+len(d.Strings)+len(d.Visits)+len(d.Flashes))
	for k, v := range d.Ints {
		values[k] = v
	}
	for k, v := range d.Strings {
		values[k] = v
	}
	for k, v := range d.Visits {
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
