package db

import (
	"fmt"

	"github.com/stacks-ils/stacks"
)

// Violations runs query, which selects one text column describing a violation per
// row, and returns each row as a violation of check. The domain packages write their
// invariants this way (circulation.Check, holds.Check, patrons.Check).
func Violations(tx *Tx, check, query string, args ...any) ([]stacks.Violation, error) {
	rows, err := tx.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []stacks.Violation
	for rows.Next() {
		var detail string
		if err := rows.Scan(&detail); err != nil {
			return nil, err
		}
		out = append(out, stacks.Violation{Check: check, Detail: detail})
	}
	return out, rows.Err()
}

// Check runs SQLite's own checks of the file in tx: PRAGMA integrity_check (pages,
// indexes, constraints) and PRAGMA foreign_key_check (rows naming a parent that does
// not exist). Each problem either reports is one violation.
func Check(tx *Tx) ([]stacks.Violation, error) {
	var out []stacks.Violation
	rows, err := tx.Query(`PRAGMA integrity_check`)
	if err != nil {
		return nil, fmt.Errorf("integrity check: %w", err)
	}
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return nil, fmt.Errorf("integrity check: %w", err)
		}
		if msg != "ok" {
			out = append(out, stacks.Violation{Check: "integrity", Detail: msg})
		}
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("integrity check: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("integrity check: %w", err)
	}

	rows, err = tx.Query(`PRAGMA foreign_key_check`)
	if err != nil {
		return nil, fmt.Errorf("foreign key check: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, parent string
		var rowid *int64
		var fkid int
		if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
			return nil, fmt.Errorf("foreign key check: %w", err)
		}
		where := "a row without rowid"
		if rowid != nil {
			where = fmt.Sprintf("row %d", *rowid)
		}
		out = append(out, stacks.Violation{Check: "foreign-key",
			Detail: fmt.Sprintf("%s of %s names a row of %s that does not exist (foreign key %d)", where, table, parent, fkid)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("foreign key check: %w", err)
	}
	return out, nil
}
