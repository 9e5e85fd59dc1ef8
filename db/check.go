package db

import (
	"fmt"

	"github.com/stacks-ils/stacks"
)

// Invariant is one rule a domain package keeps true in its tables, stated as a
// query selecting one text column, a description of each row that breaks it.
type Invariant struct {
	// Name names the rule, such as "loan-item-not-on-loan".
	Name  string
	Query string
}

// Violations runs each invariant's query in tx and returns every row as a
// violation of it. The domain packages state their invariants this way
// (circulation.Check, holds.Check, patrons.Check).
func Violations(tx *Tx, invariants []Invariant) ([]stacks.Violation, error) {
	var out []stacks.Violation
	for _, inv := range invariants {
		vs, err := violationsOf(tx, inv)
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", inv.Name, err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

func violationsOf(tx *Tx, inv Invariant) ([]stacks.Violation, error) {
	rows, err := tx.Query(inv.Query)
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
		out = append(out, stacks.Violation{Check: inv.Name, Detail: detail})
	}
	return out, rows.Err()
}

// Check runs the engine's own checks of the database in tx. On SQLite: PRAGMA
// integrity_check (pages, indexes, constraints) and PRAGMA foreign_key_check
// (rows naming a parent that does not exist). On PostgreSQL, which enforces
// foreign keys itself: no invalid index and no unvalidated constraint
// (checkPostgres). Each problem reported is one violation.
func Check(tx *Tx) ([]stacks.Violation, error) {
	if tx.Engine() == Postgres {
		return checkPostgres(tx)
	}
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
