// Package migrations holds the numbered SQL files that build the library database.
// They are embedded in the binary; package db applies them in order, each in its own
// transaction, and records each one it applied.
//
// SQLite's are here, PostgreSQL's in postgres/. Every version has a file for each
// engine (package db refuses to migrate otherwise): a change to the schema is
// written twice, in each engine's SQL. PostgreSQL's first file,
// 0017_baseline.sql, creates the schema of SQLite's 0001 to 0017 at once.
package migrations

import "embed"

// FS holds the migrations, named NNNN_description.sql: SQLite's at the top,
// PostgreSQL's under postgres/.
//
//go:embed *.sql postgres/*.sql
var FS embed.FS
