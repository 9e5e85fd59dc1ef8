// Package migrations holds the numbered SQL files that build the library database.
// They are embedded in the binary; package db applies them in order, each in its own
// transaction, and records each one it applied.
package migrations

import "embed"

// FS holds the migrations, named NNNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
