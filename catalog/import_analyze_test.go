package catalog_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// TestImportAnalyzes: on PostgreSQL an import that creates or updates 1,000
// records or more runs ANALYZE on records, records_fts and items at its end (a
// search's plan depends on how many records have its words, and autovacuum may
// come much later); one of 999 does not. Each table's analyze_count (manual
// ANALYZEs only, not autovacuum's) counts it. On SQLite, the counterpart: Stacks
// runs no ANALYZE there (FTS5 keeps its own statistics), so neither import leaves
// SQLite's statistics tables (sqlite_stat1, ...) behind.
func TestImportAnalyzes(t *testing.T) {
	d := mustEmptyLibrary(t)
	before := analyses(t, d)
	for _, tc := range []struct {
		records  int
		analysed bool
	}{
		{999, false},
		{1000, true},
	} {
		sum := importGenerated(t, d, fmt.Sprintf("an%d-", tc.records), tc.records)
		if sum.Created != tc.records || sum.Rejected != 0 {
			t.Fatalf("import of %d records: %+v", tc.records, sum)
		}
		after := analyses(t, d)
		if !d.Postgres() {
			if len(after) != 0 {
				t.Errorf("after an import of %d records SQLite has statistics tables: %v", tc.records, after)
			}
			continue
		}
		want := maps.Clone(before)
		if tc.analysed {
			for table := range want {
				want[table]++
			}
		}
		if !maps.Equal(after, want) {
			t.Errorf("an import of %d records: ANALYZE counts %v, want %v (before it %v)", tc.records, after, want, before)
		}
		before = after
	}
}

// analyses is, on PostgreSQL, how many times ANALYZE was run by hand on each
// table an import analyses; on SQLite, the statistics tables ANALYZE would
// create, by name.
func analyses(t *testing.T, d *db.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		q := `SELECT name, 1 FROM sqlite_master WHERE name LIKE 'sqlite_stat%'`
		if tx.Engine() == db.Postgres {
			q = `SELECT relname, analyze_count FROM pg_stat_user_tables
				WHERE schemaname = current_schema() AND relname IN ('records', 'records_fts', 'items')`
		}
		rows, err := tx.Query(q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var n int
			if err := rows.Scan(&name, &n); err != nil {
				return err
			}
			out[name] = n
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Postgres() && len(out) != 3 {
		t.Fatalf("pg_stat_user_tables has %d of the 3 tables: %v", len(out), out)
	}
	return out
}

// importGenerated imports n new records, each with a control number of prefix
// and its number, and no copies.
func importGenerated(t *testing.T, d *db.DB, prefix string, n int) catalog.ImportSummary {
	t.Helper()
	var buf bytes.Buffer
	for i := range n {
		rec := &marc.Record{Leader: "00000nam a2200000 a 4500", Fields: []marc.Field{
			{Tag: "001", Value: fmt.Sprintf("%s%04d", prefix, i)},
			{Tag: "245", Ind1: '0', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: fmt.Sprintf("Generated title %s%d", prefix, i)}}},
		}}
		if err := marc.WriteISO2709(&buf, rec); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := catalog.Import(context.Background(), d, marc.NewReader(&buf), catalog.ImportOptions{
		Actor: stacks.Actor{Name: "test"}, Branch: "CEN", ItemType: "BOOK"})
	if err != nil {
		t.Fatalf("import %d records: %v", n, err)
	}
	return sum
}
