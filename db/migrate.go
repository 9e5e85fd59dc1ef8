package db

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/migrations"
)

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
	// From is the first version the file records: Version, except for a
	// PostgreSQL baseline (NNNN_baseline.sql), which creates the schema of
	// versions 1 to NNNN at once and records them all.
	From int
}

// MigrationsFor returns an engine's embedded migrations in order: SQLite's in
// migrations/, PostgreSQL's in migrations/postgres/. Every version must exist for
// both engines: a migration added for one engine only is refused here, so that no
// server starts on a schema the other engine's servers would not have.
func MigrationsFor(e Engine) ([]Migration, error) {
	dir := "."
	if e == Postgres {
		dir = "postgres"
	}
	ms, err := readMigrations(dir, e == Postgres)
	if err != nil {
		return nil, err
	}
	if err := sameVersions(); err != nil {
		return nil, err
	}
	return ms, nil
}

// readMigrations reads the numbered files of one directory of migrations.FS.
func readMigrations(dir string, baselines bool) ([]Migration, error) {
	names, err := fs.Glob(migrations.FS, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, name := range names {
		base := path.Base(name)
		num, rest, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and _", name)
		}
		b, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return nil, err
		}
		from := v
		if baselines && rest == "baseline.sql" {
			from = 1
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(b), From: from})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].From <= ms[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share a number", ms[i-1].Name, ms[i].Name)
		}
	}
	return ms, nil
}

// sameVersions checks that the two engines' migrations cover the same versions.
// Only the file names are read.
func sameVersions() error {
	sqliteNames, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return err
	}
	pgNames, err := fs.Glob(migrations.FS, "postgres/*.sql")
	if err != nil {
		return err
	}
	return compareVersions(sqliteNames, pgNames)
}

// compareVersions returns an error naming a version that one engine's files
// have and the other's lack. A PostgreSQL file NNNN_baseline.sql covers 1 to NNNN.
func compareVersions(sqliteNames, pgNames []string) error {
	covered := func(names []string, baselines bool) (map[int]bool, error) {
		vs := map[int]bool{}
		for _, name := range names {
			num, rest, _ := strings.Cut(path.Base(name), "_")
			v, err := strconv.Atoi(num)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("migration %s: name must start with a positive number and _", name)
			}
			from := v
			if baselines && rest == "baseline.sql" {
				from = 1
			}
			for w := from; w <= v; w++ {
				vs[w] = true
			}
		}
		return vs, nil
	}
	lite, err := covered(sqliteNames, false)
	if err != nil {
		return err
	}
	pg, err := covered(pgNames, true)
	if err != nil {
		return err
	}
	var missing []string
	for v := range lite {
		if !pg[v] {
			missing = append(missing, fmt.Sprintf("version %d exists for SQLite (migrations/) but not for PostgreSQL (migrations/postgres/)", v))
		}
	}
	for v := range pg {
		if !lite[v] {
			missing = append(missing, fmt.Sprintf("version %d exists for PostgreSQL (migrations/postgres/) but not for SQLite (migrations/)", v))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("migration %s: every migration needs a file for both engines, with the same number", strings.Join(missing, "; "))
	}
	return nil
}

// Migrate brings the schema up to date and returns how many migrations it applied.
// Each migration runs in its own transaction and is recorded in schema_migrations.
// An up-to-date database costs one query.
//
// On PostgreSQL each migration also runs in one transaction, holding the write
// lock, so that servers starting together apply it once.
func (db *DB) Migrate(ctx context.Context) (int, error) {
	ms, err := MigrationsFor(db.engine)
	if err != nil {
		return 0, err
	}
	if db.engine == Postgres {
		return db.migratePostgres(ctx, ms)
	}
	var current, count int
	// The check reads through the read pool, so that an up-to-date database costs
	// one query and no write connection.
	err = db.read.QueryRowContext(ctx, `SELECT coalesce(max(version), 0), count(*) FROM schema_migrations`).Scan(&current, &count)
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
	// A database normally holds every version up to its newest. One that does not
	// was migrated by a build that lacked a migration numbered below its newest
	// (two branches, each with its own number, landing in the other order): the
	// missing ones are applied too, in order, rather than skipped for ever.
	done := map[int]bool{}
	below := 0
	for _, m := range ms {
		if m.Version <= current {
			below++
		}
	}
	if count != below {
		rows, err := db.read.QueryContext(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return 0, fmt.Errorf("read schema versions: %w", err)
		}
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return 0, fmt.Errorf("read schema versions: %w", err)
			}
			done[v] = true
		}
		if err := rows.Close(); err != nil {
			return 0, fmt.Errorf("read schema versions: %w", err)
		}
	} else {
		for _, m := range ms {
			if m.Version <= current {
				done[m.Version] = true
			}
		}
	}
	applied := 0
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		var err error
		if m.ForeignKeysOff() {
			err = db.migrateForeignKeysOff(ctx, m)
		} else {
			err = db.Write(ctx, func(tx *Tx) error {
				if _, err := tx.Exec(m.SQL); err != nil {
					return err
				}
				_, err := tx.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
					m.Version, m.Name, FormatTime(tx.Now()))
				return err
			})
		}
		if err != nil {
			return applied, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		applied++
	}
	return applied, nil
}

// foreignKeysOffMarker, as the first line of a migration, runs it with foreign
// keys off: the way SQLite rebuilds a table that others reference (create the
// new table, copy, drop the old, rename), since DROP TABLE with foreign keys on
// deletes every row first and fails on the references to them.
const foreignKeysOffMarker = "-- stacks:foreign-keys-off"

// ForeignKeysOff reports whether the migration must run with foreign keys off.
func (m Migration) ForeignKeysOff() bool {
	first, _, _ := strings.Cut(m.SQL, "\n")
	return strings.TrimSpace(first) == foreignKeysOffMarker
}

// migrateForeignKeysOff applies m on the write connection with foreign keys off,
// in one transaction, and commits only if PRAGMA foreign_key_check finds no
// broken reference. SQLite ignores PRAGMA foreign_keys inside a transaction, so
// it is set on the connection before BEGIN and set back after, whatever happens.
// Holding the connection (the only write one) keeps every other write waiting.
func (db *DB) migrateForeignKeysOff(ctx context.Context, m Migration) (err error) {
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer func() {
		if _, ferr := conn.ExecContext(context.Background(), `PRAGMA foreign_keys = ON`); ferr != nil && err == nil {
			err = fmt.Errorf("turn foreign keys back on: %w", ferr)
		}
	}()
	sqltx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer sqltx.Rollback()
	if _, err := sqltx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	rows, err := sqltx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return err
	}
	var broken []string
	for rows.Next() {
		var table, parent string
		var rowid, fkid sql.NullInt64
		if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
			rows.Close()
			return err
		}
		broken = append(broken, fmt.Sprintf("%s row %d names a %s that does not exist", table, rowid.Int64, parent))
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if len(broken) > 0 {
		return fmt.Errorf("foreign key check after the migration: %s", strings.Join(broken, "; "))
	}
	if _, err := sqltx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, FormatTime(db.Now().UTC().Truncate(time.Second))); err != nil {
		return err
	}
	return sqltx.Commit()
}
