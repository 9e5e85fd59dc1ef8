package reports

import "github.com/stacks-ils/stacks/db"

// forEngine returns the SQLite or the PostgreSQL text of a statement, for the
// engine tx runs on, where the two engines differ (issue 17).
func forEngine[T any](tx *db.Tx, sqlite, postgres T) T {
	if tx.Engine() == db.Postgres {
		return postgres
	}
	return sqlite
}
