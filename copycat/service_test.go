package copycat_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/copycat"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

var admin = stacks.Actor{Name: "admin"}

func auditCount(t *testing.T, d *db.DB, action string) int {
	t.Helper()
	var n int
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM audit_log WHERE action = ?`, action).Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTargetsAddUpdateDelete(t *testing.T) {
	d := dbtest.Open(t, db.Options{})
	s := copycat.NewService(d)
	ctx := context.Background()

	z, err := s.AddTarget(ctx, admin, copycat.Target{Name: " Union catalogue ", Kind: copycat.Z3950, Address: "z.example.org:2100/Books", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if z.ID == 0 || z.Name != "Union catalogue" || z.Syntax != copycat.MARC21 || z.Timeout != copycat.DefaultTimeout {
		t.Errorf("added %+v: want the name trimmed and MARC21, the default timeout filled in", z)
	}
	sru, err := s.AddTarget(ctx, admin, copycat.Target{Name: "a national library", Kind: copycat.SRU, Address: "https://sru.example.org/cat?x-info=1",
		Timeout: 3 * time.Second, TitleIndex: "title"})
	if err != nil {
		t.Fatal(err)
	}
	if sru.Syntax != copycat.MARCXML || sru.Enabled {
		t.Errorf("added %+v: want MARCXML, disabled", sru)
	}

	list, err := s.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != sru.ID || list[1] != z {
		t.Fatalf("Targets = %+v; want the two by name, as added", list)
	}
	if got, err := s.Target(ctx, sru.ID); err != nil || got != sru {
		t.Errorf("Target(%d) = %+v, %v; want %+v", sru.ID, got, err, sru)
	}

	sru.Enabled = true
	sru.Address = "https://sru.example.org/v2"
	if _, err := s.UpdateTarget(ctx, admin, sru); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Target(ctx, sru.ID); !got.Enabled || got.Address != "https://sru.example.org/v2" || got.TitleIndex != "title" {
		t.Errorf("after update: %+v", got)
	}

	// Names are unique whatever their case.
	_, err = s.AddTarget(ctx, admin, copycat.Target{Name: "UNION CATALOGUE", Kind: copycat.Z3950, Address: "h:1/d"})
	if stacks.ErrorField(err) != "name" || !strings.Contains(stacks.ErrorMessage(err), "already a target named") {
		t.Errorf("duplicate name: %v", err)
	}
	sru.Name = "union catalogue"
	if _, err := s.UpdateTarget(ctx, admin, sru); stacks.ErrorField(err) != "name" {
		t.Errorf("renaming onto another's name: %v", err)
	}

	if err := s.DeleteTarget(ctx, admin, z.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Target(ctx, z.ID); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("deleted target: %v, want sql.ErrNoRows", err)
	}
	if err := s.DeleteTarget(ctx, admin, z.ID); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("deleting it again: %v, want sql.ErrNoRows", err)
	}
	if _, err := s.UpdateTarget(ctx, admin, z); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("updating it: %v, want sql.ErrNoRows", err)
	}
	for action, want := range map[string]int{"copycat.target.add": 2, "copycat.target.update": 1, "copycat.target.delete": 1} {
		if n := auditCount(t, d, action); n != want {
			t.Errorf("%d %s audit entries, want %d", n, action, want)
		}
	}
}

func TestTargetValidation(t *testing.T) {
	for _, c := range []struct {
		t            copycat.Target
		field, words string
	}{
		{copycat.Target{Kind: copycat.SRU, Address: "http://h/"}, "name", "Give the target a name"},
		{copycat.Target{Name: "abc\xff", Kind: copycat.SRU, Address: "http://h/"}, "name", "not text"},
		{copycat.Target{Name: "a\tb", Kind: copycat.SRU, Address: "http://h/"}, "name", "control characters"},
		{copycat.Target{Name: "x", Kind: "ftp", Address: "http://h/"}, "kind", "SRU or Z39.50"},
		{copycat.Target{Name: "x", Kind: copycat.SRU, Address: "h:210/db"}, "address", "starting http:// or https://"},
		{copycat.Target{Name: "x", Kind: copycat.SRU, Address: "http://h/", Syntax: copycat.MARC21}, "syntax", "choose MARCXML"},
		{copycat.Target{Name: "x", Kind: copycat.SRU, Address: "http://h/", ISBNIndex: "bath isbn"}, "isbn_index", "not a CQL index name"},
		{copycat.Target{Name: "x", Kind: copycat.Z3950, Address: "http://h/sru"}, "address", "port"},
		{copycat.Target{Name: "x", Kind: copycat.Z3950, Address: "h:210"}, "address", "host:port/database"},
		{copycat.Target{Name: "x", Kind: copycat.Z3950, Address: "h:99999/db"}, "address", "not a number from 1 to 65535"},
		{copycat.Target{Name: "x", Kind: copycat.Z3950, Address: "h:210/db", TitleIndex: "dc.title"}, "isbn_index", "Bib-1"},
		{copycat.Target{Name: "x", Kind: copycat.Z3950, Address: "h:210/db", Timeout: 500 * time.Millisecond}, "timeout", "from 1 s to 30 s"},
		{copycat.Target{Name: "x", Kind: copycat.Z3950, Address: "h:210/db", Timeout: time.Hour}, "timeout", "from 1 s to 30 s"},
	} {
		_, err := copycat.Normalize(c.t)
		if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != c.field || !strings.Contains(stacks.ErrorMessage(err), c.words) {
			t.Errorf("Normalize(%+v) = %v (field %q, %q); want field %q saying %q", c.t, err, stacks.ErrorField(err), stacks.ErrorMessage(err), c.field, c.words)
		}
	}
	// An address without a port takes Z39.50's.
	if _, err := copycat.Normalize(copycat.Target{Name: "x", Kind: copycat.Z3950, Address: "h/db"}); err != nil {
		t.Errorf("host/database: %v", err)
	}
}

// The service searches the enabled targets only, and says so when there are none.
func TestServiceSearch(t *testing.T) {
	d := dbtest.Open(t, db.Options{})
	s := copycat.NewService(d)
	ctx := context.Background()
	q := query(t, copycat.Title, "computer")
	if _, err := s.Search(ctx, q, 2); !errors.Is(err, copycat.ErrNoTargets) {
		t.Fatalf("no targets: %v", err)
	}
	sru, z := yazTargets(t)
	z.Enabled = false
	for _, tg := range []copycat.Target{sru, z} {
		if _, err := s.AddTarget(ctx, admin, tg); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Search(ctx, q, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Target.Name != sru.Name || res[0].Err != nil || len(res[0].Records) != 2 {
		t.Fatalf("results %+v; want the enabled SRU target's two records", res)
	}
}
