package catalog

import (
	"context"
	"fmt"
	"slices"

	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// record_system_numbers holds each record's 035 $a numbers as the Matcher
// compares them (systemKey), written with the record's MARC by every writer of
// it (createMARC, writeMARC, the merge, the direct import, a staged batch's
// commit and undo); a record's rows leave with it (ON DELETE CASCADE). A
// library whose records carried 035 fields before the table existed has it
// built from their MARC by BuildSystemNumbers (stacks migrate, and every
// matcher's caller before it matches): the Matcher reads the table alone.

// systemNumbersTable is the name of record_system_numbers in catalog_derived.
const systemNumbersTable = "record_system_numbers"

// buildChunk is how many records' MARC BuildSystemNumbers reads a transaction.
const buildChunk = 1000

// systemNumbersBuilt reports whether record_system_numbers holds every
// record's numbers.
func systemNumbersBuilt(tx *db.Tx) (bool, error) {
	var built int
	err := tx.QueryRow(`SELECT built FROM catalog_derived WHERE name = ?`, systemNumbersTable).Scan(&built)
	if err != nil {
		return false, fmt.Errorf("read whether the 035 numbers are indexed: %w", err)
	}
	return built == 1, nil
}

// BuildSystemNumbers fills record_system_numbers from the records' MARC when it
// is not built yet (records imported before it existed), buildChunk records a
// transaction so that the desk's writes go on between them, and marks it
// built. Records written meanwhile keep their own rows. It does nothing, at
// the cost of one read, once the table is built; stacks migrate and every
// caller of a Matcher call it first.
func BuildSystemNumbers(ctx context.Context, d *db.DB) error {
	var built bool
	if err := d.Read(ctx, func(tx *db.Tx) (err error) {
		built, err = systemNumbersBuilt(tx)
		return err
	}); err != nil || built {
		return err
	}
	var after int64
	for {
		var last int64
		err := d.Write(ctx, func(tx *db.Tx) error {
			rows, err := tx.Query(`SELECT id, marc FROM records WHERE id > ? ORDER BY id LIMIT ?`, after, buildChunk)
			if err != nil {
				return fmt.Errorf("index the 035 numbers: %w", err)
			}
			var ids []int64
			var keys [][]any
			for rows.Next() {
				var id int64
				var source string
				if err := rows.Scan(&id, &source); err != nil {
					rows.Close()
					return err
				}
				ids, last = append(ids, id), id
				if rec, err := marc.FromXML(source); err == nil {
					for _, k := range uniqueKeys(rec) {
						keys = append(keys, []any{k, id})
					}
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if len(ids) == 0 {
				_, err := tx.Exec(`UPDATE catalog_derived SET built = 1 WHERE name = ?`, systemNumbersTable)
				return err
			}
			in, args := idArgs(ids)
			if _, err := tx.Exec(`DELETE FROM record_system_numbers WHERE record_id IN (`+in+`)`, args...); err != nil {
				return fmt.Errorf("index the 035 numbers: %w", err)
			}
			return insertSystemNumbers(tx, keys)
		})
		if err != nil || last == 0 {
			return err
		}
		after = last
	}
}

// uniqueKeys are rec's 035 keys (systemKeys), each once, in order.
func uniqueKeys(rec *marc.Record) []string {
	var out []string
	for _, k := range systemKeys(rec) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// insertSystemNumbers writes rows (key, record id), 500 a statement.
func insertSystemNumbers(tx *db.Tx, rows [][]any) error {
	if err := bulk(tx, `INSERT INTO record_system_numbers (key, record_id) VALUES `, "(?, ?)", "", rows); err != nil {
		return fmt.Errorf("index the 035 numbers: %w", err)
	}
	return nil
}

// setSystemNumbers writes record id's 035 numbers as rec has them, when they
// differ from old (uniqueKeys of its MARC before; none for a new record):
// nothing is written for a save that leaves the 035 fields as they were.
func setSystemNumbers(tx *db.Tx, id int64, old []string, rec *marc.Record) error {
	keys := uniqueKeys(rec)
	if slices.Equal(old, keys) {
		return nil
	}
	if len(old) > 0 {
		if _, err := tx.Exec(`DELETE FROM record_system_numbers WHERE record_id = ?`, id); err != nil {
			return fmt.Errorf("record %d: index the 035 numbers: %w", id, err)
		}
	}
	rows := make([][]any, len(keys))
	for i, k := range keys {
		rows[i] = []any{k, id}
	}
	return insertSystemNumbers(tx, rows)
}
