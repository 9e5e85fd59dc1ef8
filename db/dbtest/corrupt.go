package dbtest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// Corrupt runs stmts on d without its foreign keys, to break the database as a
// bug or a hand edit could, for the tests of the integrity checks (Check).
//
// On SQLite it opens a connection of its own to the file: the db package turns
// the foreign keys on for its connections. On PostgreSQL it runs them in one
// transaction of d's with session_replication_role set to replica, which turns
// the foreign keys' triggers off for that transaction (the test cluster's user is
// a superuser). PostgreSQL still enforces CHECK and NOT NULL constraints there: a
// corruption they make impossible fails here, so a test that breaks the database
// that way says so and keeps the case to SQLite.
func Corrupt(tb testing.TB, d *db.DB, stmts ...string) {
	tb.Helper()
	if d.Postgres() {
		err := d.Write(context.Background(), func(tx *db.Tx) error {
			if _, err := tx.Exec(`SET LOCAL session_replication_role = replica`); err != nil {
				return err
			}
			for _, s := range stmts {
				if _, err := tx.Exec(s); err != nil {
					tb.Errorf("%s: %v", s, err)
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("corrupt the database: %v", err)
		}
		return
	}
	c, err := sql.Open("sqlite", d.Path())
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	for _, s := range stmts {
		if _, err := c.Exec(s); err != nil {
			tb.Fatalf("%s: %v", s, err)
		}
	}
}
