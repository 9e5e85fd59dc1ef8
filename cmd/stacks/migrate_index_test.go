package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// TestMigrateBuildsSystemNumbers: on a library whose records carried 035
// before the index of 035 numbers existed (the migration left it not built),
// stacks migrate builds it, so that no import waits for it, and stacks check
// finds it as the MARC says.
func TestMigrateBuildsSystemNumbers(t *testing.T) {
	path, sqlDB, count := smallDemo(t)
	rec := &marc.Record{Leader: "00000nam a2200000 a 4500", Fields: []marc.Field{
		{Tag: "035", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: "(OCoLC)ocm00004242"}}},
		{Tag: "245", Ind1: '0', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: "Older"}}},
	}}
	src, err := marc.ToXML(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.Exec(`UPDATE records SET marc = ? WHERE id = (SELECT min(id) FROM records)`, src); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.Exec(`UPDATE catalog_derived SET built = 0 WHERE name = 'record_system_numbers'`); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"migrate", "--db", path}, &out, &out); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out.String())
	}
	if n := count(`SELECT count(*) FROM record_system_numbers WHERE key = '4242' AND record_id = (SELECT min(id) FROM records)`); n != 1 {
		t.Errorf("the record's 035 indexed %d times, want once", n)
	}
	if n := count(`SELECT built FROM catalog_derived WHERE name = 'record_system_numbers'`); n != 1 {
		t.Errorf("the index is not marked built (%d)", n)
	}
	out.Reset()
	if err := run(context.Background(), []string{"check", "--db", path}, &out, &out); err != nil {
		t.Errorf("check: %v\n%s", err, out.String())
	}
}
