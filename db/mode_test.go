//go:build unix

package db_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestPrivateFiles: the database, its -wal and -shm files and its backups are
// readable and writable by their owner only (0600), under the usual umask (022)
// with which SQLite would make them 0644: they hold readers' personal data and
// the staff's sessions. An existing database made by an older Stacks is made
// private when opened.
func TestPrivateFiles(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	ctx := context.Background()

	checkModes := func(t *testing.T, paths ...string) {
		t.Helper()
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				t.Errorf("%s: %v", filepath.Base(p), err)
				continue
			}
			if got := fi.Mode().Perm(); got != db.PrivateMode {
				t.Errorf("%s: mode %v, want %v", filepath.Base(p), got, db.PrivateMode)
			}
		}
	}
	// write makes the -wal and -shm files exist and hold something.
	write := func(t *testing.T, d *db.DB) {
		t.Helper()
		err := d.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES ('mode-test', 'x')
				ON CONFLICT (name) DO UPDATE SET value = excluded.value`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("NewDatabase", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "library.db")
		d, err := db.Open(path, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if _, err := d.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		write(t, d)
		checkModes(t, path, path+"-wal", path+"-shm")
	})

	t.Run("ExistingDatabase", func(t *testing.T) {
		// A database as an older Stacks left it: 0644, and so its -wal and -shm.
		path := filepath.Join(t.TempDir(), "library.db")
		d, err := db.Open(path, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		d.Close()
		other, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := other.Exec(`PRAGMA journal_mode = WAL; INSERT INTO preferences (name, value) VALUES ('held', 'open')`); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err = db.Open(path, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		write(t, d)
		checkModes(t, path, path+"-wal", path+"-shm")
	})

	t.Run("Backup", func(t *testing.T) {
		d := mustOpenDB(t)
		if _, err := d.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		write(t, d)
		out := filepath.Join(t.TempDir(), "backup.db")
		if err := d.Backup(ctx, out); err != nil {
			t.Fatal(err)
		}
		checkModes(t, out)
		if _, err := os.Stat(out + "-journal"); !os.IsNotExist(err) {
			t.Errorf("a journal is left beside the backup: %v", err)
		}
	})
}
