package db

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks/migrations"
)

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations in order.
func Migrations() ([]Migration, error) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and _", name)
		}
		b, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share a number", ms[i-1].Name, ms[i].Name)
		}
	}
	return ms, nil
}

// Migrate brings the schema up to date and returns how many migrations it applied.
// Each migration runs in its own transaction and is recorded in schema_migrations.
// An up-to-date database costs one query.
func (db *DB) Migrate(ctx context.Context) (int, error) {
	ms, err := Migrations()
	if err != nil {
		return 0, err
	}
	var current int
	// The check reads through the read pool, so that an up-to-date database costs
	// one query and no write connection.
	err = db.read.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current)
	if err != nil {
		if !strings.Contains(err.Error(), "no such table") {
			return 0, fmt.Errorf("read schema version: %w", err)
		}
		if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
			return 0, fmt.Errorf("create schema_migrations: %w", err)
		}
		current = 0
	}
	if n := len(ms); n > 0 && current > ms[n-1].Version {
		return 0, fmt.Errorf("the database is at schema version %d, newer than this program knows (%d): use a newer stacks binary", current, ms[n-1].Version)
	}
	applied := 0
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		err := db.Write(ctx, func(tx *Tx) error {
			if _, err := tx.Exec(m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, FormatTime(tx.Now()))
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		applied++
	}
	return applied, nil
}
