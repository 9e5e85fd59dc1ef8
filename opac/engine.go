package opac

import "github.com/stacks-ils/stacks/db"

// forEngine returns the SQLite or the PostgreSQL text of a statement, for the
// engine tx runs on, where the two engines differ (issue 17).
func forEngine[T any](tx *db.Tx, sqlite, postgres T) T {
	if tx.Engine() == db.Postgres {
		return postgres
	}
	return sqlite
}

// sessionValue is an SQL expression reading the integer the scs session codec
// stores under i.<key> in a sessions row's data (JSON in a BLOB), NULL when the
// data is not JSON (on PostgreSQL: does not begin with "{", as IS JSON needs
// version 16 and Debian's is 15).
func sessionValue(tx *db.Tx, key string) string {
	return forEngine(tx,
		`CASE WHEN json_valid(CAST(data AS TEXT)) THEN json_extract(CAST(data AS TEXT), '$.i.`+key+`') END`,
		`CASE WHEN substr(data, 1, 1) = CAST('\x7b' AS bytea) THEN CAST(CAST(convert_from(data, 'UTF8') AS jsonb) #>> '{i,`+key+`}' AS bigint) END`)
}
