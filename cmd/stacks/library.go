package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/staff"
)

// Only init, demo, migrate, copy's destination and serve --demo create a
// library. Every other command works on one that exists: given a SQLite path
// that names no file (a typo, or no --db at all in another directory), SQLite
// would create an empty database there, and the command would then fail on
// what the empty library lacks ("no branch CEN") instead of on the real
// mistake.

// missingLibrary is the error for a --db path with no file: what to run to
// make one, or how to name the one that exists.
func missingLibrary(path string) error {
	return usageError{fmt.Sprintf("%s does not exist. Set up a new library there with\n"+
		"  stacks init --db %s --branch CODE --branch-name NAME\n"+
		"(or try the demo library: stacks serve --demo --db %s),\n"+
		"or name an existing library with --db PATH (or STACKS_DB)", path, shellQuote(path), shellQuote(path))}
}

// requireFile refuses a SQLite target that names no file; a PostgreSQL URL
// passes (connecting says whether its database exists).
func requireFile(target string) error {
	if db.IsPostgresURL(target) {
		return nil
	}
	if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
		return missingLibrary(target)
	} else if err != nil {
		return err
	}
	return nil
}

// openLibrary opens and migrates a library that must exist already.
func (f *dbFlags) openLibrary(ctx context.Context, logger *slog.Logger) (*db.DB, error) {
	if err := requireFile(f.path); err != nil {
		return nil, err
	}
	return f.open(ctx, logger)
}

// notSetUp says that the library at target has no branch yet, so has no staff
// account either (every account works at a branch).
func notSetUp(target string) error {
	return fmt.Errorf("%s has no branch yet: it is not set up. Set it up first with\n"+
		"  stacks init --db %s --branch CODE --branch-name NAME\n"+
		"(the first branch, patron categories, item types, a loan rule and the administrator)",
		db.DisplayName(target), shellQuote(db.DisplayName(target)))
}

// branchesOf returns the library's branches, or notSetUp when there is none.
func branchesOf(ctx context.Context, d *db.DB, target string) ([]library.Branch, error) {
	var bs []library.Branch
	err := d.Read(ctx, func(tx *db.Tx) error {
		var err error
		bs, err = library.ListBranches(tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(bs) == 0 {
		return nil, notSetUp(target)
	}
	return bs, nil
}

// firstBranch is the branch set up first (by stacks init) of bs, not empty.
func firstBranch(bs []library.Branch) library.Branch {
	first := bs[0]
	for _, b := range bs[1:] {
		if b.ID < first.ID {
			first = b
		}
	}
	return first
}

// warnNoStaff logs, when the library served has no active staff account, that
// nobody can sign in and which commands make the first account: a server on a
// new library otherwise shows a sign-in page nobody can pass.
func warnNoStaff(ctx context.Context, d *db.DB, target string, logger *slog.Logger) error {
	a, err := staff.NewService(d).Accounts(ctx)
	if err != nil {
		return err
	}
	// Accounts puts the active accounts first.
	if len(a.Users) > 0 && a.Users[0].Active {
		return nil
	}
	t := shellQuote(db.DisplayName(target))
	logger.Warn("no staff account can sign in yet: set the library up with stacks init --db " + t +
		" --branch CODE --branch-name NAME (the first branch and its administrator), or add an account with stacks user add --db " + t)
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it, so that a printed
// command can be copied as it is.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkTempDir makes sure SQLite has a temporary directory it can write:
// large sorts and index builds spill into temporary files there, and without
// one they fail as "disk I/O error (6410)" (SQLITE_IOERR_GETTEMPPATH), which
// names no directory. SQLite takes the first writable one of these.
func checkTempDir() error {
	candidates := []string{os.Getenv("SQLITE_TMPDIR"), os.Getenv("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp", "."}
	for _, dir := range candidates {
		if dir == "" {
			continue
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if f, err := os.CreateTemp(dir, ".stacks-tmp-check-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return nil
		}
	}
	tmpdir := os.Getenv("TMPDIR")
	if tmpdir == "" {
		tmpdir = "not set"
	}
	return fmt.Errorf("no writable temporary directory (TMPDIR is %s; /var/tmp, /tmp and the working directory are not writable either): "+
		"SQLite needs one for large sorts, and fails without it as \"disk I/O error (6410)\". "+
		"Set TMPDIR to a directory this user may write, e.g. one on the data volume (the container image sets TMPDIR=/data)", tmpdir)
}
