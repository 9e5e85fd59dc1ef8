package db

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Backup writes a consistent copy of the database to dest, a new file, while the
// library keeps working. On PostgreSQL it runs pg_dump (backupPostgres). On SQLite: SQLite's VACUUM INTO reads one snapshot of the database
// (in WAL mode a reader neither waits for the writer nor holds it up) and writes it,
// compacted, as a complete database in one file, with no -wal file beside it.
//
// It runs on a connection of its own, neither the write connection (which would
// hold up every checkout for as long as the copy takes) nor one of the read pool's:
// those are query_only, and SQLite refuses VACUUM INTO on them ("attempt to write a
// readonly database", although only dest is written).
//
// Backup refuses to overwrite a file that exists. The copy is readable and
// writable by its owner only (PrivateMode), like the database: it holds the same
// personal data. It is flushed to disk (fsync) before Backup returns; if it fails,
// nothing is left at dest.
func (db *DB) Backup(ctx context.Context, dest string) error {
	if dest == "" {
		return errors.New("backup: no file to write the copy to")
	}
	// Creating dest first, empty and private, both sets its mode (VACUUM INTO
	// would create it 0644) and claims the name: a file that exists, or appears
	// meanwhile, is never overwritten. SQLite writes into an empty file.
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, PrivateMode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("backup: %s already exists; choose a new file name (a backup never overwrites a file)", dest)
	} else if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(dest)
		return fmt.Errorf("backup: %w", err)
	}
	if db.engine == Postgres {
		if err := db.backupPostgres(ctx, dest); err != nil {
			os.Remove(dest)
			return err
		}
		if err := syncFile(filepath.Dir(dest)); err != nil {
			return fmt.Errorf("backup: flush the directory of %s: %w", dest, err)
		}
		return nil
	}

	conn, err := sql.Open("sqlite", db.path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		os.Remove(dest)
		return fmt.Errorf("backup: open %s: %w", db.path, err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, dest); err != nil {
		os.Remove(dest)
		return fmt.Errorf("backup of %s to %s: %w", db.path, dest, err)
	}
	if err := syncFile(dest); err != nil {
		os.Remove(dest)
		return fmt.Errorf("backup: flush %s: %w", dest, err)
	}
	if err := syncFile(filepath.Dir(dest)); err != nil {
		return fmt.Errorf("backup: flush the directory of %s: %w", dest, err)
	}
	return nil
}

// backupPostgres writes the PostgreSQL database to dest, which exists empty,
// with pg_dump in its custom format (restore it with pg_restore): one consistent
// snapshot, taken while the servers keep working. The password goes to pg_dump
// in its environment, never on its command line.
func (db *DB) backupPostgres(ctx context.Context, dest string) error {
	pgDump, err := exec.LookPath("pg_dump")
	if err != nil {
		return errNoPgDump
	}
	env, err := pgEnv(db.path)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	cmd := exec.CommandContext(ctx, pgDump, "--format=custom", "--no-password", "--file="+dest)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("backup of %s to %s: pg_dump: %v: %s", db.Name(), dest, err, strings.TrimSpace(stderr.String()))
	}
	if err := syncFile(dest); err != nil {
		return fmt.Errorf("backup: flush %s: %w", dest, err)
	}
	return nil
}

// syncFile flushes a file or directory to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
