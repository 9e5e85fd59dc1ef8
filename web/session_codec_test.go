package web

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
)

func TestSessionCodec(t *testing.T) {
	deadline := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	values := map[string]any{
		sessUserID:       int64(7),
		sessSeen:         int64(1796000000),
		sessCheckinBatch: "b-123",
		sessVisit:        deskVisit{PatronID: 42, Started: 1796000000, FinesConfirmed: true},
		sessFlash:        []Flash{{Kind: "ok", Text: "Checked out <b>"}, {Kind: "warn", Text: "é"}},
	}
	b, err := sessionCodec{}.Encode(deadline, values)
	if err != nil {
		t.Fatal(err)
	}
	gotDeadline, got, err := sessionCodec{}.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !gotDeadline.Equal(deadline) || !reflect.DeepEqual(got, values) {
		t.Errorf("round trip: %v %#v\nwant %v %#v", gotDeadline, got, deadline, values)
	}

	// A session written by scs's gob codec (before this codec) still reads.
	old, err := scs.GobCodec{}.Encode(deadline, values)
	if err != nil {
		t.Fatal(err)
	}
	gotDeadline, got, err = sessionCodec{}.Decode(old)
	if err != nil || !gotDeadline.Equal(deadline) || !reflect.DeepEqual(got, values) {
		t.Errorf("gob session: %v %#v %v", gotDeadline, got, err)
	}

	// A kind of value it does not know is an error, not a silent loss.
	if _, err := (sessionCodec{}).Encode(deadline, map[string]any{"n": 3}); err == nil || !strings.Contains(err.Error(), `"n"`) {
		t.Errorf("int value: %v, want an error naming the key", err)
	}
	if _, _, err := (sessionCodec{}).Decode([]byte("{broken")); err == nil {
		t.Error("broken JSON decoded")
	}
}
