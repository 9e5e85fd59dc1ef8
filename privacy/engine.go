package privacy

import "github.com/stacks-ils/stacks/db"

// The SQL the engines spell differently, each in one small function
// (docs/postgres-porting.md).

// idsIn is a subquery listing, as integers, the ids of the JSON array given as
// the parameter param (?, ?1): one parameter for a list of any length.
func idsIn(tx *db.Tx, param string) string {
	return db.Pick(tx, `SELECT value FROM json_each(`+param+`)`,
		`SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(`+param+` AS json))`)
}

// greatest is the scalar maximum of its arguments: SQLite's max(a, b, ...),
// PostgreSQL's greatest(a, b, ...). The callers never pass a NULL (SQLite's
// max would return NULL, PostgreSQL's greatest ignores it).
func greatest(tx *db.Tx) string { return db.Pick(tx, "max", "greatest") }

// moneySQL is the text of an integer amount of cents as printf('%.2f',
// cents / 100.0) gave it on SQLite ("12.50", "-0.05"), on both engines.
func moneySQL(cents string) string {
	c := "CAST(" + cents + " AS BIGINT)"
	return "(CASE WHEN " + c + " < 0 THEN '-' ELSE '' END || CAST(abs(" + c + ") / 100 AS TEXT) || '.' || substr(CAST(100 + abs(" + c + ") % 100 AS TEXT), 2))"
}
