package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

const copyHelp = `Copies a whole library from one database to another: a SQLite file to a
PostgreSQL database (postgres://user:password@host:port/database), back, or
between two of the same engine. Every table is copied as it is, ids included,
except the full-text index, which is rebuilt on the target, and the schema
versions, which the target's own migrations record.

The target is migrated to this program's schema version first, which must be
the source's (run stacks migrate --db SRC before if it is older). A PostgreSQL
target database must exist (createdb); a SQLite target file is created if need
be. A target that already holds a library is refused unless --replace is given,
which deletes everything in it first. The target is written in one
transaction: if anything fails, it keeps what it had before (migrated, its rows
unchanged), and the same command can simply be run again.

The source is read in one snapshot, so its servers may keep running, but what
they write while the copy runs is not in the target: stop them (or put the
library in a quiet hour) for a move. Stop the target's servers: the copy holds
its tables locked. Sessions are copied too: staff and patrons signed in on the
source stay signed in when the servers start on the target.

Afterwards every table's rows are counted and hashed on both ends (the same
SHA-256 over the rows in key order on either engine), stacks check runs on the
source and the target, and a table of the results is printed. The exit status
is 1 if any count or checksum differs or a check finds a violation.`

// copyFailed is stacks copy's verdict when the copy committed but does not
// match its source or a check fails: exit status 1.
type copyFailed struct{ msg string }

func (e copyFailed) Error() string { return e.msg }

func runCopy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("copy", "copy --from SRC --to DST [--replace]", copyHelp, stderr)
	from := flags.String("from", "", "the library to copy: a SQLite file or a postgres:// URL")
	to := flags.String("to", "", "where to copy it: a SQLite file (created if need be) or a postgres:// URL of an existing database")
	replace := flags.Bool("replace", false, "delete the library the target already holds, then copy")
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return usageError{fmt.Sprintf("copy takes no arguments, got %q: stacks copy --from library.db --to postgres://stacks@dbhost/library", flags.Args())}
	}
	if *from == "" || *to == "" {
		return usageError{"copy needs --from and --to: stacks copy --from library.db --to postgres://stacks@dbhost/library"}
	}
	for _, t := range []struct{ flag, target string }{{"--from", *from}, {"--to", *to}} {
		if strings.Contains(t.target, "://") && !db.IsPostgresURL(t.target) {
			return usageError{fmt.Sprintf("%s %s: give a SQLite file path or a postgres:// URL (postgres://user:password@host:port/database)", t.flag, db.DisplayName(t.target))}
		}
	}
	if db.SameDatabase(*from, *to) {
		return usageError{fmt.Sprintf("--from and --to both name %s: copy to another database", db.DisplayName(*from))}
	}
	srcName, dstName := db.DisplayName(*from), db.DisplayName(*to)

	// The source must exist: Open would create an empty SQLite file.
	if !db.IsPostgresURL(*from) {
		fi, err := os.Stat(*from)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the source %s does not exist: name the library's database file with --from", *from)
		} else if err != nil {
			return err
		} else if !fi.Mode().IsRegular() {
			return fmt.Errorf("the source %s is not a file: name the library's database file with --from", *from)
		}
	}
	src, err := db.Open(*from, db.Options{ReadConns: 1, WriteConns: 1, ExistingFile: !db.IsPostgresURL(*from)})
	if err != nil {
		return err
	}
	defer src.Close()

	newFile := false
	if !db.IsPostgresURL(*to) {
		_, err := os.Stat(*to)
		newFile = errors.Is(err, fs.ErrNotExist)
	}
	dst, err := db.Open(*to, db.Options{ReadConns: 1, WriteConns: 1, CommitEach: true})
	if err != nil {
		return err
	}
	defer dst.Close()

	fmt.Fprintf(stdout, "copying %s to %s\n", srcName, dstName)
	rep, err := db.Copy(ctx, src, dst, db.CopyOptions{
		Replace: *replace,
		Rebuild: catalog.RebuildSearchIndex,
	})
	if err != nil {
		if rep == nil && newFile {
			// A file this command created holds no library: leave nothing.
			dst.Close()
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(*to + suffix)
			}
			return fmt.Errorf("copy %s to %s: %w (the new file %s was removed)", srcName, dstName, err, *to)
		}
		return fmt.Errorf("copy %s to %s: %w", srcName, dstName, err)
	}

	rows := rep.Rows()
	fmt.Fprintf(stdout, "\n%-22s %10s %10s  %s\n", "table", "source", "target", "checksum (SHA-256 of the rows in key order)")
	for _, t := range rep.Tables {
		verdict := "same " + t.Source.Sum[:16]
		if t.Source.Rows != t.Target.Rows || t.Source.Sum != t.Target.Sum {
			verdict = fmt.Sprintf("DIFFERENT: %.16s on the source, %.16s on the target", t.Source.Sum, t.Target.Sum)
		}
		fmt.Fprintf(stdout, "%-22s %10d %10d  %s\n", t.Table, t.Source.Rows, t.Target.Rows, verdict)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(stdout, "%-22s %10s %10s  not copied: %s\n", s.Table, "", "", s.Why)
	}
	rate := float64(rows) / max(rep.Elapsed.Seconds(), 1e-3)
	replaced := ""
	if rep.Replaced {
		replaced = " (its previous contents deleted: --replace)"
	}
	fmt.Fprintf(stdout, "\ncopied %d tables, %d rows, to %s%s at schema version %d in %s (%.0f rows/s)\n",
		len(rep.Tables), rows, dstName, replaced, rep.Version, rep.Elapsed.Round(time.Millisecond), rate)

	var problems []string
	if diffs := rep.Differences(); len(diffs) > 0 {
		problems = append(problems, fmt.Sprintf("%d table(s) differ between source and target (%s)", len(diffs), strings.Join(diffs, "; ")))
	}
	for _, c := range []struct {
		name, target string
		d            *db.DB
	}{{"source", *from, src}, {"target", *to, dst}} {
		n, err := checkLibrary(ctx, c.d, c.target, stdout)
		if err != nil {
			return err
		}
		if n > 0 {
			problems = append(problems, fmt.Sprintf("stacks check finds %d violation(s) on the %s (listed above)", n, c.name))
		}
	}
	if len(problems) > 0 {
		return copyFailed{fmt.Sprintf("copy %s to %s: committed, but %s", srcName, dstName, strings.Join(problems, "; "))}
	}
	fmt.Fprintf(stdout, "copy verified: every table's row count and checksum are the same on %s and %s, and stacks check passes on both\n", srcName, dstName)
	return nil
}
