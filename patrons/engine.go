package patrons

import "github.com/stacks-ils/stacks/db"

// forEngine returns the SQLite or the PostgreSQL text of a statement, for the
// engine tx runs on, where the two engines differ (issue 17).
func forEngine[T any](tx *db.Tx, sqlite, postgres T) T {
	if tx.Engine() == db.Postgres {
		return postgres
	}
	return sqlite
}

// jsonValues is a FROM item whose column value holds, as text, the elements of
// the JSON array given as the next parameter: one parameter for a list of any
// length (a load file names thousands of cards), where IN (?, ?, ...) would meet
// the engines' limits on parameters.
func jsonValues(tx *db.Tx) string {
	return forEngine(tx, `json_each(?)`, `json_array_elements_text(CAST(? AS json))`)
}
