package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Copy moves a whole library from one database to another, either engine to
// either engine (stacks copy). It knows no domain table by name: the tables
// and their columns, keys and foreign keys are read from each engine's
// catalogue (sqlite_schema and its pragmas, pg_catalog and
// information_schema).
//
//   - The source is read in one snapshot (one read transaction): servers may
//     keep working on it, and what they write meanwhile is not copied.
//   - The target is first migrated to the source's schema version (which must
//     be this program's), then written in one transaction: after a failure it
//     is as it was before, migrated and nothing else.
//   - Each value is converted to its target column's type: integers, text and
//     blobs (SQLite's INTEGER, TEXT and BLOB; PostgreSQL's bigint, text and
//     bytea) byte for byte, NULLs kept.
//   - Triggers are off while the rows go in (SQLite's are dropped and created
//     again in the same transaction, PostgreSQL's disabled and enabled), so
//     that the copy is the source's rows and nothing derived from them;
//     foreign keys are checked at commit (SQLite) or met by copying parents
//     first (PostgreSQL). Full-text indexes are not copied: SQLite's virtual
//     tables and their shadow tables, and PostgreSQL's tables of tsvector
//     columns, are rebuilt from the copied rows by CopyOptions.Rebuild.
//   - schema_migrations is not copied: the target's own migrations recorded
//     the same versions (Copy checks that they did).
//   - PostgreSQL's identity sequences are moved past the largest id copied.
//
// Every table's rows are counted and hashed on the source as they are read,
// and again on the target after the commit, the same way (TableSum); the
// report says where they differ.
func Copy(ctx context.Context, src, dst *DB, opt CopyOptions) (*CopyReport, error) {
	start := time.Now()
	latest, err := latestVersion(src.engine)
	if err != nil {
		return nil, err
	}
	// The source's version is checked before the target is touched (created,
	// migrated), and again in the snapshot the copy reads.
	if err := src.Read(ctx, func(tx *Tx) error { return sourceVersion(tx, src.Name(), latest) }); err != nil {
		return nil, err
	}
	if _, err := dst.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate the target %s: %w", dst.Name(), err)
	}
	var fresh map[string]int64
	if !opt.Replace {
		if fresh, err = freshCounts(ctx); err != nil {
			return nil, err
		}
	}
	rep := &CopyReport{Version: latest}
	err = src.Read(ctx, func(stx *Tx) error {
		if err := sourceVersion(stx, src.Name(), latest); err != nil {
			return err
		}
		ss, err := readSchema(stx)
		if err != nil {
			return fmt.Errorf("read the schema of %s: %w", src.Name(), err)
		}
		return dst.copyTx(ctx, func(dtx *Tx) error {
			return copyInto(stx, dtx, ss, src.Name(), dst.Name(), fresh, opt, rep)
		})
	})
	if err != nil {
		return nil, err
	}
	if dst.engine == Postgres {
		// Fresh statistics for the planner, rather than whatever autovacuum
		// gathers later.
		if _, err := dst.write.ExecContext(ctx, `ANALYZE`); err != nil {
			return nil, fmt.Errorf("analyze %s after the copy: %w", dst.Name(), err)
		}
	}
	rep.Elapsed = time.Since(start)
	// The target as committed, read back and hashed as the source was.
	err = dst.Read(ctx, func(tx *Tx) error {
		ds, err := readSchema(tx)
		if err != nil {
			return err
		}
		for i := range rep.Tables {
			t := &rep.Tables[i]
			sum, err := tableSum(tx, ds.tables[t.Table])
			if err != nil {
				return fmt.Errorf("read back %s: %w", t.Table, err)
			}
			t.Target = sum
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("verify %s after the copy (the copy itself was committed): %w", dst.Name(), err)
	}
	return rep, nil
}

// CopyOptions configure Copy.
type CopyOptions struct {
	// Replace deletes everything in a target that already holds a library;
	// without it Copy refuses such a target.
	Replace bool
	// Rebuild rebuilds the target's full-text indexes from the copied rows,
	// inside the copy's transaction, after the rows (and triggers) are in.
	// The domain package that owns an index knows how (catalog).
	Rebuild func(*Tx) error
	// Progress, if set, is told each table as it is copied.
	Progress func(table string, rows int64)
}

// CopyReport is what Copy did: each table's rows and checksum on both ends.
type CopyReport struct {
	// Version is the schema version of both databases.
	Version int
	// Tables are the copied tables, parents before children.
	Tables []TableCopy
	// Skipped are the tables not copied, each with the reason.
	Skipped []SkippedTable
	// Replaced reports that the target held a library, deleted first.
	Replaced bool
	// Elapsed is the time the copy took, the read-back excluded.
	Elapsed time.Duration
}

// TableCopy is one table's sums on the source and on the target.
type TableCopy struct {
	Table          string
	Source, Target TableSum
}

// SkippedTable is a table Copy did not copy, and why.
type SkippedTable struct{ Table, Why string }

// TableSum is a table's row count and checksum: SHA-256 over its rows in
// primary key order (text in byte order on both engines), each value written
// as its type (integer, real, text, blob or NULL) and its bytes, the columns
// in the order of their names. The same rows give the same sum on SQLite and
// PostgreSQL.
type TableSum struct {
	Rows int64
	Sum  string
}

// Rows is the number of rows copied.
func (r *CopyReport) Rows() int64 {
	var n int64
	for _, t := range r.Tables {
		n += t.Source.Rows
	}
	return n
}

// Differences lists the tables whose rows differ between source and target.
func (r *CopyReport) Differences() []string {
	var out []string
	for _, t := range r.Tables {
		switch {
		case t.Source.Rows != t.Target.Rows:
			out = append(out, fmt.Sprintf("%s: %d rows on the source, %d on the target", t.Table, t.Source.Rows, t.Target.Rows))
		case t.Source.Sum != t.Target.Sum:
			out = append(out, fmt.Sprintf("%s: the rows differ (checksum %.12s on the source, %.12s on the target)", t.Table, t.Source.Sum, t.Target.Sum))
		}
	}
	return out
}

// SourceVersionError is Copy's refusal of a source whose schema version is not
// this program's.
type SourceVersionError struct {
	Name            string
	Version, Latest int
}

func (e *SourceVersionError) Error() string {
	if e.Version < e.Latest {
		return fmt.Sprintf("the source %s is at schema version %d, this stacks binary's is %d: run stacks migrate --db %s first, then copy again",
			e.Name, e.Version, e.Latest, e.Name)
	}
	return fmt.Sprintf("the source %s is at schema version %d, newer than this stacks binary knows (%d): copy with the newer stacks binary that migrated it",
		e.Name, e.Version, e.Latest)
}

// NotEmptyError is Copy's refusal of a target that already holds a library.
type NotEmptyError struct {
	Name   string
	Tables []string
}

func (e *NotEmptyError) Error() string {
	shown := e.Tables
	if len(shown) > 5 {
		shown = append(slices.Clip(shown[:5]), "...")
	}
	return fmt.Sprintf("the target %s already holds a library (%s): run again with --replace to delete everything in it and copy, or copy to an empty database",
		e.Name, strings.Join(shown, ", "))
}

func latestVersion(e Engine) (int, error) {
	ms, err := MigrationsFor(e)
	if err != nil {
		return 0, err
	}
	return ms[len(ms)-1].Version, nil
}

// sourceVersion checks that the source is a Stacks database at version latest.
func sourceVersion(tx *Tx, name string, latest int) error {
	var v int
	if err := tx.QueryRow(`SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return fmt.Errorf("the source %s is not a Stacks database (no schema version: %v): name the library's database with --from", name, err)
	}
	if v != latest {
		return &SourceVersionError{Name: name, Version: v, Latest: latest}
	}
	return nil
}

// copyTx runs fn in one write transaction on db: on PostgreSQL holding the
// write lock, so that no server writes beside the copy.
func (db *DB) copyTx(ctx context.Context, fn func(*Tx) error) error {
	sqltx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin a transaction on the target %s: %w", db.Name(), err)
	}
	defer sqltx.Rollback()
	tx := &Tx{tx: sqltx, ctx: ctx, now: db.Now().UTC().Truncate(time.Second), rebind: db.rebind}
	if db.engine == Postgres {
		if _, err := sqltx.ExecContext(ctx, lockStatement); err != nil {
			return fmt.Errorf("wait for the write lock of %s: %w", db.Name(), err)
		}
	}
	if err := fn(tx); err != nil {
		var notEmpty *NotEmptyError
		if errors.As(err, &notEmpty) {
			return err
		}
		return fmt.Errorf("%w; nothing was written: the target %s is as it was before the copy (migrated, its rows unchanged); fix the cause and run the same command again", err, db.Name())
	}
	if err := sqltx.Commit(); err != nil {
		return fmt.Errorf("commit the copy to %s: %w; the transaction did not commit, so the target keeps its rows from before the copy: run the same command again", db.Name(), err)
	}
	return nil
}

// copyInto copies every table of the source schema ss, read in stx, into dtx.
func copyInto(stx, dtx *Tx, ss *schema, srcName, dstName string, fresh map[string]int64, opt CopyOptions, rep *CopyReport) error {
	ds, err := readSchema(dtx)
	if err != nil {
		return fmt.Errorf("read the schema of %s: %w", dstName, err)
	}
	if err := sameMigrations(stx, dtx); err != nil {
		return err
	}
	if err := ss.matches(ds, srcName, dstName); err != nil {
		return err
	}
	order, err := ds.parentsFirst()
	if err != nil {
		return err
	}
	for _, name := range ss.names() {
		switch t := ss.tables[name]; {
		case t.name == migrationsTable:
			rep.Skipped = append(rep.Skipped, SkippedTable{name, "recorded by the target's own migrations"})
		case t.index:
			rep.Skipped = append(rep.Skipped, SkippedTable{name, "full-text index: rebuilt on the target"})
		}
	}
	for _, name := range ds.names() {
		if t := ds.tables[name]; t.index && ss.tables[name] == nil {
			rep.Skipped = append(rep.Skipped, SkippedTable{name, "full-text index: rebuilt on the target"})
		}
	}

	slices.SortFunc(rep.Skipped, func(a, b SkippedTable) int { return strings.Compare(a.Table, b.Table) })

	// A target holds a library if a table has other rows than the migrations
	// put there (preferences, charge types, ...).
	var held []string
	for _, name := range order {
		var n int64
		if err := dtx.QueryRow(`SELECT count(*) FROM ` + quoteIdent(name)).Scan(&n); err != nil {
			return fmt.Errorf("count the rows of %s on the target: %w", name, err)
		}
		if fresh != nil && n != fresh[name] {
			held = append(held, fmt.Sprintf("%s: %d rows", name, n))
		}
	}
	if len(held) > 0 {
		return &NotEmptyError{Name: dstName, Tables: held}
	}
	rep.Replaced = opt.Replace

	restore, err := triggersOff(dtx, ds)
	if err != nil {
		return err
	}
	if err := emptyTables(dtx, ds, order); err != nil {
		return err
	}
	for _, name := range order {
		sum, err := copyTable(stx, dtx, ss.tables[name], ds.tables[name])
		if err != nil {
			return fmt.Errorf("copy %s: %w", name, err)
		}
		rep.Tables = append(rep.Tables, TableCopy{Table: name, Source: sum})
		if opt.Progress != nil {
			opt.Progress(name, sum.Rows)
		}
	}
	if err := moveSequences(dtx, ds, order); err != nil {
		return err
	}
	if err := restore(); err != nil {
		return err
	}
	if opt.Rebuild != nil {
		if err := opt.Rebuild(dtx); err != nil {
			return fmt.Errorf("rebuild the full-text index on the target: %w", err)
		}
	}
	return nil
}

// migrationsTable is the migrations' bookkeeping, not copied.
const migrationsTable = "schema_migrations"

// sameMigrations checks that the target's migrations recorded the versions
// the source's did, so that schema_migrations need not be copied.
func sameMigrations(stx, dtx *Tx) error {
	s, err := stx.IDs(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return fmt.Errorf("read the source's schema versions: %w", err)
	}
	d, err := dtx.IDs(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return fmt.Errorf("read the target's schema versions: %w", err)
	}
	if !slices.Equal(s, d) {
		return fmt.Errorf("the source records schema versions %v, the target %v: run stacks migrate on both with this binary", s, d)
	}
	return nil
}

// valueClass is what a column holds, the same on both engines.
type valueClass byte

const (
	classInteger valueClass = 'I'
	classReal    valueClass = 'R'
	classText    valueClass = 'T'
	classBlob    valueClass = 'B'
	classBool    valueClass = 'L'
)

func (c valueClass) String() string {
	switch c {
	case classInteger:
		return "integer"
	case classReal:
		return "real"
	case classText:
		return "text"
	case classBlob:
		return "blob"
	case classBool:
		return "boolean"
	}
	return "unknown"
}

type column struct {
	name  string
	class valueClass
	decl  string
}

type table struct {
	name    string
	cols    []column // in the order of their names
	pk      []string
	parents []string
	// index: a full-text index, rebuilt rather than copied.
	index bool
	// triggers: SQLite's trigger statements on the table; on PostgreSQL, one
	// entry if it has any.
	triggers []string
	// sequences: PostgreSQL's identity or serial columns.
	sequences []string
}

type schema struct {
	engine Engine
	tables map[string]*table
}

func (s *schema) names() []string {
	var out []string
	for n := range s.tables {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// copied reports whether table t is copied.
func (t *table) copied() bool { return t != nil && !t.index && t.name != migrationsTable }

// matches checks that the target d has every table the source s copies, with
// the same columns holding the same kinds of value, and no other.
func (s *schema) matches(d *schema, srcName, dstName string) error {
	var diffs []string
	for _, name := range s.names() {
		st, dt := s.tables[name], d.tables[name]
		if !st.copied() {
			continue
		}
		if !dt.copied() {
			diffs = append(diffs, "table "+name+" is not on the target")
			continue
		}
		dcols := map[string]column{}
		for _, c := range dt.cols {
			dcols[c.name] = c
		}
		for _, c := range st.cols {
			dc, ok := dcols[c.name]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("column %s.%s is not on the target", name, c.name))
			case dc.class != c.class:
				diffs = append(diffs, fmt.Sprintf("column %s.%s is %s on the source, %s on the target", name, c.name, c.decl, dc.decl))
			}
			delete(dcols, c.name)
		}
		for c := range dcols {
			diffs = append(diffs, fmt.Sprintf("column %s.%s is not on the source", name, c))
		}
	}
	for _, name := range d.names() {
		if d.tables[name].copied() && !s.tables[name].copied() {
			diffs = append(diffs, "table "+name+" is not on the source")
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		return fmt.Errorf("the schemas of %s and %s differ although both are at the same version (%s): this build's two migrations disagree; report it",
			srcName, dstName, strings.Join(diffs, "; "))
	}
	return nil
}

// parentsFirst orders the copied tables so that a table comes after those its
// foreign keys name (a table naming itself is copied in key order).
func (s *schema) parentsFirst() ([]string, error) {
	var out []string
	done := map[string]bool{}
	names := s.names()
	for len(out) < countCopied(s) {
		progress := false
		for _, n := range names {
			t := s.tables[n]
			if done[n] || !t.copied() {
				continue
			}
			ready := true
			for _, p := range t.parents {
				if p != n && !done[p] && s.tables[p].copied() {
					ready = false
				}
			}
			if ready {
				done[n] = true
				out = append(out, n)
				progress = true
			}
		}
		if !progress {
			if s.engine == SQLite {
				// Foreign keys are checked at commit: any order does.
				for _, n := range names {
					if !done[n] && s.tables[n].copied() {
						done[n] = true
						out = append(out, n)
					}
				}
				continue
			}
			var left []string
			for _, n := range names {
				if !done[n] && s.tables[n].copied() {
					left = append(left, n)
				}
			}
			return nil, fmt.Errorf("the tables %s name each other in a circle of foreign keys: stacks copy cannot order them for PostgreSQL", strings.Join(left, ", "))
		}
	}
	return out, nil
}

func countCopied(s *schema) int {
	n := 0
	for _, t := range s.tables {
		if t.copied() {
			n++
		}
	}
	return n
}

// readSchema reads the tables of the database tx runs on.
func readSchema(tx *Tx) (*schema, error) {
	if tx.Engine() == Postgres {
		return readPostgresSchema(tx)
	}
	return readSQLiteSchema(tx)
}

func readSQLiteSchema(tx *Tx) (*schema, error) {
	s := &schema{engine: SQLite, tables: map[string]*table{}}
	rows, err := tx.Query(`SELECT name, type FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return nil, err
		}
		switch typ {
		case "table":
			s.tables[name] = &table{name: name}
		case "virtual", "shadow":
			s.tables[name] = &table{name: name, index: true}
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	for _, t := range s.tables {
		if t.index {
			continue
		}
		rows, err := tx.Query(`SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid`, t.name)
		if err != nil {
			return nil, err
		}
		type pkCol struct {
			name string
			n    int
		}
		var pks []pkCol
		for rows.Next() {
			var c column
			var pk int
			if err := rows.Scan(&c.name, &c.decl, &pk); err != nil {
				rows.Close()
				return nil, err
			}
			c.class = sqliteClass(c.decl)
			t.cols = append(t.cols, c)
			if pk > 0 {
				pks = append(pks, pkCol{c.name, pk})
			}
		}
		if err := closeRows(rows); err != nil {
			return nil, err
		}
		slices.SortFunc(pks, func(a, b pkCol) int { return a.n - b.n })
		for _, p := range pks {
			t.pk = append(t.pk, p.name)
		}
		rows, err = tx.Query(`SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)`, t.name)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				rows.Close()
				return nil, err
			}
			t.parents = append(t.parents, p)
		}
		if err := closeRows(rows); err != nil {
			return nil, err
		}
	}
	rows, err = tx.Query(`SELECT tbl_name, sql FROM sqlite_schema WHERE type = 'trigger' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl, stmt string
		if err := rows.Scan(&tbl, &stmt); err != nil {
			rows.Close()
			return nil, err
		}
		if t := s.tables[tbl]; t != nil {
			t.triggers = append(t.triggers, stmt)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	for _, t := range s.tables {
		t.sortColumns()
	}
	return s, nil
}

// sqliteClass is the kind of value a SQLite column of declared type decl
// holds, by SQLite's affinity rules.
func sqliteClass(decl string) valueClass {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return classInteger
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return classText
	case d == "", strings.Contains(d, "BLOB"):
		return classBlob
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return classReal
	case strings.Contains(d, "BOOL"):
		return classBool
	}
	return 0
}

// postgresClass is the kind of value a PostgreSQL column of type typ holds.
func postgresClass(typ string) valueClass {
	switch typ {
	case "bigint", "integer", "smallint":
		return classInteger
	case "text", "character varying", "character":
		return classText
	case "bytea":
		return classBlob
	case "double precision", "real":
		return classReal
	case "boolean":
		return classBool
	}
	return 0
}

func readPostgresSchema(tx *Tx) (*schema, error) {
	s := &schema{engine: Postgres, tables: map[string]*table{}}
	rows, err := tx.Query(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return nil, err
		}
		s.tables[name] = &table{name: name}
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	rows, err = tx.Query(`SELECT table_name, column_name, data_type,
			pg_get_serial_sequence(quote_ident(table_name), column_name) IS NOT NULL
		FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl string
		var c column
		var seq bool
		if err := rows.Scan(&tbl, &c.name, &c.decl, &seq); err != nil {
			rows.Close()
			return nil, err
		}
		t := s.tables[tbl]
		if t == nil {
			continue // a view
		}
		c.class = postgresClass(c.decl)
		if c.decl == "tsvector" {
			t.index = true
		}
		t.cols = append(t.cols, c)
		if seq {
			t.sequences = append(t.sequences, c.name)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	rows, err = tx.Query(`SELECT c.relname, a.attname FROM pg_index i
		JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
		WHERE i.indisprimary AND n.nspname = current_schema() ORDER BY c.relname, k.ord`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl, col string
		if err := rows.Scan(&tbl, &col); err != nil {
			rows.Close()
			return nil, err
		}
		if t := s.tables[tbl]; t != nil {
			t.pk = append(t.pk, col)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	rows, err = tx.Query(`SELECT DISTINCT c.relname, p.relname FROM pg_constraint k
		JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE k.contype = 'f' AND n.nspname = current_schema()`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl, parent string
		if err := rows.Scan(&tbl, &parent); err != nil {
			rows.Close()
			return nil, err
		}
		if t := s.tables[tbl]; t != nil {
			t.parents = append(t.parents, parent)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	rows, err = tx.Query(`SELECT DISTINCT c.relname FROM pg_trigger g
		JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE NOT g.tgisinternal AND n.nspname = current_schema()`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl string
		if err := rows.Scan(&tbl); err != nil {
			rows.Close()
			return nil, err
		}
		if t := s.tables[tbl]; t != nil {
			t.triggers = append(t.triggers, "user triggers")
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	for _, t := range s.tables {
		t.sortColumns()
	}
	return s, nil
}

func (t *table) sortColumns() {
	slices.SortFunc(t.cols, func(a, b column) int { return strings.Compare(a.name, b.name) })
}

func closeRows(rows *sql.Rows) error {
	if err := rows.Err(); err != nil {
		rows.Close()
		return err
	}
	return rows.Close()
}

// quoteIdent quotes a table or column name for either engine.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// triggersOff turns the target's triggers off for the copy and returns the
// function that turns them back on, in the same transaction.
func triggersOff(tx *Tx, s *schema) (restore func() error, err error) {
	var stmts []string
	var tables []string
	for _, name := range s.names() {
		t := s.tables[name]
		if len(t.triggers) == 0 {
			continue
		}
		tables = append(tables, name)
		stmts = append(stmts, t.triggers...)
	}
	if s.engine == Postgres {
		for _, name := range tables {
			if _, err := tx.tx.ExecContext(tx.ctx, `ALTER TABLE `+quoteIdent(name)+` DISABLE TRIGGER USER`); err != nil {
				return nil, fmt.Errorf("disable the triggers of %s for the copy (the target's tables must belong to the user copying): %w", name, err)
			}
		}
		return func() error {
			for _, name := range tables {
				if _, err := tx.tx.ExecContext(tx.ctx, `ALTER TABLE `+quoteIdent(name)+` ENABLE TRIGGER USER`); err != nil {
					return fmt.Errorf("enable the triggers of %s again: %w", name, err)
				}
			}
			return nil
		}, nil
	}
	// SQLite cannot disable a trigger: they are dropped, and created again
	// from their own statements before the transaction commits.
	rows, err := tx.Query(`SELECT name FROM sqlite_schema WHERE type = 'trigger'`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, err := tx.tx.ExecContext(tx.ctx, `DROP TRIGGER `+quoteIdent(n)); err != nil {
			return nil, fmt.Errorf("drop trigger %s for the copy: %w", n, err)
		}
	}
	// Foreign keys are checked when the transaction commits, once every row
	// is in.
	if _, err := tx.tx.ExecContext(tx.ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
		return nil, err
	}
	return func() error {
		for _, stmt := range stmts {
			if _, err := tx.tx.ExecContext(tx.ctx, stmt); err != nil {
				return fmt.Errorf("create a trigger again: %w", err)
			}
		}
		return nil
	}, nil
}

// emptyTables deletes every row of the target's copied tables and its
// full-text indexes (the migrations' own rows, or a library --replace
// replaces).
func emptyTables(tx *Tx, s *schema, order []string) error {
	if s.engine == Postgres {
		var names []string
		for _, n := range s.names() {
			if t := s.tables[n]; t.copied() || t.index {
				names = append(names, quoteIdent(n))
			}
		}
		if _, err := tx.tx.ExecContext(tx.ctx, `TRUNCATE `+strings.Join(names, ", ")); err != nil {
			return fmt.Errorf("empty the target's tables: %w", err)
		}
		return nil
	}
	for i := len(order) - 1; i >= 0; i-- {
		if _, err := tx.tx.ExecContext(tx.ctx, `DELETE FROM `+quoteIdent(order[i])); err != nil {
			return fmt.Errorf("empty %s on the target: %w", order[i], err)
		}
	}
	return nil
}

// selectAll is the statement reading every row of t in key order, text in
// byte order on both engines (SQLite's BINARY, PostgreSQL's "C").
func selectAll(e Engine, t *table) string {
	var cols, order []string
	for _, c := range t.cols {
		cols = append(cols, quoteIdent(c.name))
	}
	keys := t.pk
	if len(keys) == 0 {
		for _, c := range t.cols {
			keys = append(keys, c.name)
		}
	}
	for _, k := range keys {
		o := quoteIdent(k)
		if t.class(k) == classText {
			if e == Postgres {
				o += ` COLLATE "C"`
			} else {
				o += ` COLLATE BINARY`
			}
		}
		order = append(order, o+" NULLS FIRST")
	}
	return `SELECT ` + strings.Join(cols, ", ") + ` FROM ` + quoteIdent(t.name) + ` ORDER BY ` + strings.Join(order, ", ")
}

func (t *table) class(col string) valueClass {
	for _, c := range t.cols {
		if c.name == col {
			return c.class
		}
	}
	return 0
}

// maxParams bounds the parameters of one INSERT (SQLite allows 32766,
// PostgreSQL 65535); maxBatch the rows.
const (
	maxParams = 30000
	copyBatch = 500
)

// copyTable copies the rows of st (read in stx) into dt (in dtx), hashing
// them as they pass, and returns the source's sum.
func copyTable(stx, dtx *Tx, st, dt *table) (TableSum, error) {
	for _, c := range dt.cols {
		if c.class == 0 {
			return TableSum{}, fmt.Errorf("column %s.%s has type %q on the target, which stacks copy does not know how to fill", dt.name, c.name, c.decl)
		}
	}
	perRow := len(dt.cols)
	batch := max(1, min(copyBatch, maxParams/perRow))
	full, err := dtx.tx.PrepareContext(dtx.ctx, insertStatement(dtx.Engine(), dt, batch))
	if err != nil {
		return TableSum{}, err
	}
	defer full.Close()

	rows, err := stx.tx.QueryContext(stx.ctx, selectAll(stx.Engine(), st))
	if err != nil {
		return TableSum{}, fmt.Errorf("read the source: %w", err)
	}
	defer rows.Close()
	h := newRowHasher()
	vals := make([]any, perRow)
	ptrs := make([]any, perRow)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	args := make([]any, 0, batch*perRow)
	flush := func(n int) error {
		if n == 0 {
			return nil
		}
		var err error
		if n == batch {
			_, err = full.ExecContext(dtx.ctx, args...)
		} else {
			_, err = dtx.tx.ExecContext(dtx.ctx, insertStatement(dtx.Engine(), dt, n), args...)
		}
		args = args[:0]
		return err
	}
	pending := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return TableSum{}, err
		}
		for i, c := range st.cols {
			v, err := convert(vals[i], c.class, dtx.Engine())
			if err != nil {
				return TableSum{}, fmt.Errorf("row %s, column %s: %w", rowKey(st, vals), c.name, err)
			}
			h.value(c.class, v)
			args = append(args, v)
		}
		h.endRow()
		pending++
		if pending == batch {
			if err := flush(pending); err != nil {
				return TableSum{}, fmt.Errorf("write rows up to %s: %w", rowKey(st, vals), err)
			}
			pending = 0
		}
	}
	if err := rows.Err(); err != nil {
		return TableSum{}, fmt.Errorf("read the source: %w", err)
	}
	if err := flush(pending); err != nil {
		return TableSum{}, fmt.Errorf("write the last rows: %w", err)
	}
	return h.sum(), nil
}

// insertStatement inserts n rows into t, its columns in t's order.
func insertStatement(e Engine, t *table, n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO ` + quoteIdent(t.name) + ` (`)
	for i, c := range t.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.name))
	}
	b.WriteString(") VALUES ")
	p := 0
	for r := 0; r < n; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range t.cols {
			if i > 0 {
				b.WriteString(", ")
			}
			p++
			if e == Postgres {
				b.WriteString("$" + strconv.Itoa(p))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// rowKey names a row by its primary key, for a message.
func rowKey(t *table, vals []any) string {
	var parts []string
	for _, k := range t.pk {
		for i, c := range t.cols {
			if c.name == k {
				parts = append(parts, fmt.Sprintf("%s=%v", k, vals[i]))
			}
		}
	}
	if len(parts) == 0 {
		return "(a row without a primary key)"
	}
	return strings.Join(parts, " ")
}

// convert returns v, as read from either engine, as a value of class c for the
// target engine e: an integer as int64, text as string, a blob as []byte. A
// value that does not fit (text in an integer column, a fraction) is an error.
func convert(v any, c valueClass, e Engine) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c {
	case classInteger:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), nil
			}
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return n, nil
			}
		case []byte:
			if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return n, nil
			}
		}
	case classReal:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f, nil
			}
		}
	case classText:
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		case int64:
			s = strconv.FormatInt(x, 10)
		case time.Time:
			s = FormatTime(x)
		default:
			return nil, fmt.Errorf("%T %v in a text column", v, v)
		}
		if e == Postgres {
			if !utf8.ValidString(s) {
				return nil, fmt.Errorf("text %q is not valid UTF-8, which PostgreSQL refuses: correct it on the source", s)
			}
			if strings.IndexByte(s, 0) >= 0 {
				return nil, fmt.Errorf("text %q holds a NUL character, which PostgreSQL refuses: correct it on the source", s)
			}
		}
		return s, nil
	case classBlob:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case classBool:
		switch x := v.(type) {
		case bool:
			if e == Postgres {
				return x, nil
			}
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case int64:
			if x == 0 || x == 1 {
				if e == Postgres {
					return x == 1, nil
				}
				return x, nil
			}
		}
	}
	return nil, fmt.Errorf("the value %#v does not fit a column of type %s: correct it on the source", v, c)
}

// tableSum counts and hashes the rows of t in tx. A conversion to the
// engine's own column types is applied as copyTable applies it, so both ends
// hash the same values.
func tableSum(tx *Tx, t *table) (TableSum, error) {
	if t == nil {
		return TableSum{}, errors.New("the table is not in the target's schema")
	}
	rows, err := tx.tx.QueryContext(tx.ctx, selectAll(tx.Engine(), t))
	if err != nil {
		return TableSum{}, err
	}
	defer rows.Close()
	h := newRowHasher()
	vals := make([]any, len(t.cols))
	ptrs := make([]any, len(t.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return TableSum{}, err
		}
		for i, c := range t.cols {
			v, err := convert(vals[i], c.class, tx.Engine())
			if err != nil {
				return TableSum{}, fmt.Errorf("row %s, column %s: %w", rowKey(t, vals), c.name, err)
			}
			h.value(c.class, v)
		}
		h.endRow()
	}
	if err := rows.Err(); err != nil {
		return TableSum{}, err
	}
	return h.sum(), nil
}

// rowHasher hashes rows: each value as a byte for its type, then its
// contents (8 bytes for a number, a length and the bytes for text or a blob).
type rowHasher struct {
	h    hash.Hash
	rows int64
	buf  [9]byte
}

func newRowHasher() *rowHasher { return &rowHasher{h: sha256.New()} }

func (r *rowHasher) value(c valueClass, v any) {
	if v == nil {
		r.h.Write([]byte{'N'})
		return
	}
	r.buf[0] = byte(c)
	switch x := v.(type) {
	case int64:
		binary.BigEndian.PutUint64(r.buf[1:], uint64(x))
		r.h.Write(r.buf[:])
	case float64:
		binary.BigEndian.PutUint64(r.buf[1:], math.Float64bits(x))
		r.h.Write(r.buf[:])
	case bool:
		r.buf[1] = 0
		if x {
			r.buf[1] = 1
		}
		r.h.Write(r.buf[:2])
	case string:
		binary.BigEndian.PutUint64(r.buf[1:], uint64(len(x)))
		r.h.Write(r.buf[:])
		r.h.Write([]byte(x))
	case []byte:
		binary.BigEndian.PutUint64(r.buf[1:], uint64(len(x)))
		r.h.Write(r.buf[:])
		r.h.Write(x)
	}
}

func (r *rowHasher) endRow() {
	r.h.Write([]byte{'\n'})
	r.rows++
}

func (r *rowHasher) sum() TableSum {
	return TableSum{Rows: r.rows, Sum: hex.EncodeToString(r.h.Sum(nil))}
}

// moveSequences moves each PostgreSQL identity sequence past the largest id
// copied: an insert that names its id does not move it, and the next insert
// without one would take an id in use.
func moveSequences(tx *Tx, s *schema, order []string) error {
	if s.engine != Postgres {
		return nil // SQLite gives max(id) + 1
	}
	for _, name := range order {
		for _, col := range s.tables[name].sequences {
			q := fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', '%s'), coalesce(max(%s), 0) + 1, false) FROM %s`,
				strings.ReplaceAll(quoteIdent(name), "'", "''"), strings.ReplaceAll(col, "'", "''"), quoteIdent(col), quoteIdent(name))
			if _, err := tx.tx.ExecContext(tx.ctx, q); err != nil {
				return fmt.Errorf("move the sequence of %s.%s past its largest value: %w", name, col, err)
			}
		}
	}
	return nil
}

// freshCounts returns the rows per table of a newly migrated database (the
// preferences, charge types and rules the migrations insert): a target with
// just these holds no library yet. It migrates a throwaway SQLite database;
// the PostgreSQL baseline inserts the same rows (TestSchemasAgree).
func freshCounts(ctx context.Context) (map[string]int64, error) {
	dir, err := os.MkdirTemp("", "stacks-copy-")
	if err != nil {
		return nil, fmt.Errorf("a temporary directory to tell an empty library: %w", err)
	}
	defer os.RemoveAll(dir)
	// Thrown away at once: no commit need wait for the disk.
	d, err := Open(filepath.Join(dir, "fresh.db"), Options{CommitEach: true, ReadConns: 1, Synchronous: "NORMAL"})
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if _, err := d.Migrate(ctx); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	err = d.Read(ctx, func(tx *Tx) error {
		s, err := readSchema(tx)
		if err != nil {
			return err
		}
		for _, name := range s.names() {
			if !s.tables[name].copied() {
				continue
			}
			var n int64
			if err := tx.QueryRow(`SELECT count(*) FROM ` + quoteIdent(name)).Scan(&n); err != nil {
				return err
			}
			out[name] = n
		}
		return nil
	})
	return out, err
}

// SameDatabase reports whether targets a and b (file paths or postgres://
// URLs) name the same database: the same file, or the same database on the
// same server.
func SameDatabase(a, b string) bool {
	if IsPostgresURL(a) != IsPostgresURL(b) {
		return false
	}
	if IsPostgresURL(a) {
		ca, err1 := pgx.ParseConfig(a)
		cb, err2 := pgx.ParseConfig(b)
		if err1 != nil || err2 != nil {
			return a == b
		}
		return ca.Host == cb.Host && ca.Port == cb.Port && ca.Database == cb.Database
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(fa, fb)
	}
	pa, err1 := filepath.Abs(a)
	pb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && pa == pb
}
