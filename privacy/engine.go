package privacy

import "github.com/stacks-ils/stacks/db"

// forEngine returns the SQLite or the PostgreSQL text of a statement, for the
// engine tx runs on, where the two engines differ (issue 17).
// TODO(issue 17): switch on tx's engine once db.Tx names it (the PostgreSQL
// engine is being built in db); until then every transaction is SQLite's.
func forEngine[T any](tx *db.Tx, sqlite, postgres T) T { return sqlite }

// sessionValue is an SQL expression reading the integer the scs session codec
// stores under i.<key> in a sessions row's data (JSON in a BLOB), NULL when the
// data is not JSON. PostgreSQL's IS JSON needs version 16.
func sessionValue(tx *db.Tx, key string) string {
	return forEngine(tx,
		`CASE WHEN json_valid(CAST(data AS TEXT)) THEN json_extract(CAST(data AS TEXT), '$.i.`+key+`') END`,
		`CASE WHEN convert_from(data, 'UTF8') IS JSON THEN CAST(convert_from(data, 'UTF8')::jsonb #>> '{i,`+key+`}' AS bigint) END`)
}
