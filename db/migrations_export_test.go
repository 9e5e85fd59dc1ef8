package db

// Migrations returns SQLite's embedded migrations in order, for the tests that
// build a database at an older version.
func Migrations() ([]Migration, error) {
	return MigrationsFor(SQLite)
}
