package main

import (
	"context"
	"fmt"
	"io"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/patrons"
)

// checkGroup is one group of invariants `stacks check` verifies, named as its
// report names it.
type checkGroup struct {
	name string
	run  func(*db.Tx) ([]stacks.Violation, error)
}

// checkGroups are the invariants `stacks check` verifies on a database of engine
// e, in the order it reports them: the engine's own checks first (db.Check),
// named for the engine, then each domain package's.
func checkGroups(e db.Engine) []checkGroup {
	own := "SQLite integrity and foreign keys"
	if e == db.Postgres {
		own = "PostgreSQL indexes valid and constraints validated"
	}
	return []checkGroup{
		{own, db.Check},
		{"loans and items", circulation.Check},
		{"holds and the hold shelf", holds.Check},
		{"fines ledger", patrons.Check},
		{"withdrawals and merged records", catalog.CheckMaintenance},
	}
}

// violationsError reports that `stacks check` found violations: exit status 1.
type violationsError struct {
	n    int
	path string
}

func (e violationsError) Error() string {
	return fmt.Sprintf("%d violation(s) of the library's invariants in %s (listed above)", e.n, db.DisplayName(e.path))
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", "check --db FILE",
		"Checks a library database: SQLite's integrity_check and foreign_key_check (on\n"+
			"PostgreSQL: no index left invalid, no constraint left unvalidated), then the\n"+
			"circulation invariants (no item both on the shelf and on loan, one current\n"+
			"loan per item on loan, no loan without its item or patron unless anonymised (and\n"+
			"then returned, with its patron category kept), hold queues numbered 1..n, trapped\n"+
			"copies on the hold shelf or in transit to the pickup branch, no payment or waiver\n"+
			"taking more than was owed, no charge naming an anonymised loan, a withdrawal date\n"+
			"on withdrawn items only, merged records leading to a record in the catalogue).\n"+
			"Every violation is listed, with the ids, barcodes and cards concerned; the exit\n"+
			"status is 1 if there is any.\n"+
			"Run it on a live database (it only reads), after a crash, or on a backup.", stderr)
	path := fs.String("db", env("STACKS_DB", "stacks.db"), "the library database: a SQLite file, or a postgres:// URL for PostgreSQL (STACKS_DB)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("check takes no arguments, got %q (name the database with --db)", fs.Args())}
	}
	d, err := openExisting(ctx, *path)
	if err != nil {
		return err
	}
	defer d.Close()

	n, err := checkLibrary(ctx, d, *path, stdout)
	if err != nil {
		return err
	}
	if n > 0 {
		return violationsError{n: n, path: *path}
	}
	return nil
}

// checkLibrary runs every check of checkGroups(d's engine) on d (named target), prints
// each violation, or a line saying there is none, and returns how many it found.
func checkLibrary(ctx context.Context, d *db.DB, target string, stdout io.Writer) (int, error) {
	n := 0
	groups := checkGroups(d.Engine())
	err := d.Read(ctx, func(tx *db.Tx) error {
		for _, g := range groups {
			vs, err := g.run(tx)
			if err != nil {
				return err
			}
			for _, v := range vs {
				fmt.Fprintln(stdout, v)
			}
			n += len(vs)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("check %s: %w", db.DisplayName(target), err)
	}
	if n > 0 {
		return n, nil
	}
	fmt.Fprintf(stdout, "%s: no violations (", db.DisplayName(target))
	for i, g := range groups {
		if i > 0 {
			fmt.Fprint(stdout, "; ")
		}
		fmt.Fprint(stdout, g.name)
	}
	fmt.Fprintln(stdout, ")")
	return 0, nil
}

// openExisting opens a database that must already exist and have the current
// schema, for commands that read a library and must not create or migrate one.
func openExisting(ctx context.Context, target string) (*db.DB, error) {
	// A PostgreSQL database that does not exist is Open's error (it connects).
	if err := requireFile(target); err != nil {
		return nil, err
	}
	path := db.DisplayName(target)
	d, err := db.Open(target, db.Options{ReadConns: 1, WriteConns: 1})
	if err != nil {
		return nil, err
	}
	ms, err := db.MigrationsFor(d.Engine())
	if err != nil {
		d.Close()
		return nil, err
	}
	var version int
	err = d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&version)
	})
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("%s is not a Stacks database (%w)", path, err)
	}
	if latest := ms[len(ms)-1].Version; version != latest {
		d.Close()
		return nil, fmt.Errorf("%s has schema version %d, this program expects %d: run stacks migrate --db %s with the matching binary first",
			path, version, latest, path)
	}
	return d, nil
}
