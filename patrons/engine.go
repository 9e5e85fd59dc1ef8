package patrons

import "github.com/stacks-ils/stacks/db"

// jsonValues is a FROM item whose column value holds, as text, the elements of
// the JSON array given as the next parameter: one parameter for a list of any
// length (a load file names thousands of cards), where IN (?, ?, ...) would meet
// the engines' limits on parameters.
func jsonValues(tx *db.Tx) string {
	return db.Pick(tx, `json_each(?)`, `json_array_elements_text(CAST(? AS json))`)
}
