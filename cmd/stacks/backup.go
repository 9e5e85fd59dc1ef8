package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stacks-ils/stacks/db"
)

func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backup", "backup [--db FILE] OUT",
		"Writes a consistent copy of the database to OUT, a new file, while the library\n"+
			"keeps working (SQLite's VACUUM INTO: one snapshot, read without holding up the\n"+
			"desk). The copy is a complete database in one file: to restore it, stop Stacks,\n"+
			"put the copy in place of the database (and remove the old -wal and -shm files),\n"+
			"and start Stacks again. An existing OUT is never overwritten. On PostgreSQL\n"+
			"(--db postgres://...) it runs pg_dump, which must be installed, and OUT is a\n"+
			"pg_dump archive: restore it with pg_restore into an empty database.", stderr)
	path := fs.String("db", env("STACKS_DB", "stacks.db"), "the library database: a SQLite file, or a postgres:// URL for PostgreSQL (STACKS_DB)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"backup needs the file to write the copy to: stacks backup --db library.db library-backup.db"}
	}
	out := fs.Arg(0)
	d, err := openExisting(ctx, *path)
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	if err := d.Backup(ctx, out); err != nil {
		return err
	}
	var size int64
	if fi, err := os.Stat(out); err == nil {
		size = fi.Size()
	}
	fmt.Fprintf(stdout, "%s: copied to %s (%.1f MB) in %s\n", db.DisplayName(*path), out, float64(size)/(1<<20), time.Since(start).Round(time.Millisecond))
	return nil
}
