package copycat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/copycat"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

// TestMigrationDropsCharset: a library whose copycat_targets came from
// migration 0032 as it first was, with a character set column, keeps its
// targets through 0038 and can add new ones (the column was NOT NULL, and the
// program no longer writes it).
func TestMigrationDropsCharset(t *testing.T) {
	d := dbtest.Open(t, db.Options{})
	ctx := context.Background()
	ms, err := db.MigrationsFor(d.Engine())
	if err != nil {
		t.Fatal(err)
	}
	run := func(version int) {
		t.Helper()
		for _, m := range ms {
			if m.Version != version {
				continue
			}
			var code []string
			for _, line := range strings.Split(m.SQL, "\n") {
				if !strings.HasPrefix(strings.TrimSpace(line), "--") {
					code = append(code, line)
				}
			}
			for _, q := range strings.Split(strings.Join(code, "\n"), ";") {
				if strings.TrimSpace(q) == "" {
					continue
				}
				if err := d.Write(ctx, func(tx *db.Tx) error { _, err := tx.Exec(q); return err }); err != nil {
					t.Fatalf("migration %d: %v", version, err)
				}
			}
			return
		}
		t.Fatalf("no migration %d", version)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if err := d.Write(ctx, func(tx *db.Tx) error { _, err := tx.Exec(q, args...); return err }); err != nil {
			t.Fatal(err)
		}
	}
	exec(`DROP TABLE copycat_targets`)
	run(32)
	exec(`INSERT INTO copycat_targets (name, kind, address, syntax, charset, enabled, timeout_ms, created_at, updated_at)
		VALUES ('Old union catalogue', 'z3950', 'z.example.org:210/Books', 'MARC21', 'MARC-8', 1, 5000, '2026-01-05 10:00:00', '2026-01-05 10:00:00')`)
	run(38)

	s := copycat.NewService(d)
	list, err := s.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "Old union catalogue" || list[0].Address != "z.example.org:210/Books" || !list[0].Enabled {
		t.Fatalf("targets after the migration: %+v", list)
	}
	if _, err := s.AddTarget(ctx, admin, copycat.Target{Name: "New one", Kind: copycat.SRU, Address: "https://sru.example.org/cat"}); err != nil {
		t.Fatalf("adding a target after the migration: %v", err)
	}
}
