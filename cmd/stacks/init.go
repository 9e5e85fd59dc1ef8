package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/staff"
)

// runInit sets up a new library: what the administration pages need before they
// can be used (a branch, an administrator) and what the desk needs before it can
// lend (patron categories, item types, a circulation rule).
func runInit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("init", "init --db FILE --branch CODE --branch-name NAME [--admin USERNAME] [--time-zone ZONE]",
		"Sets up a new, empty library database: its first branch; patron categories\n"+
			"ADULT and CHILD; item types BOOK and REF (reference, not for loan); one\n"+
			"circulation rule for everything (21 days, 20 loans, 2 renewals, no fines);\n"+
			"the time zone; and the first administrator account, whose password is read\n"+
			"from standard input (one line) or STACKS_PASSWORD. Everything can be changed\n"+
			"afterwards on the administration pages. Refuses a database that has a branch.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	branch := fs.String("branch", "", "code of the first branch, e.g. CEN")
	branchName := fs.String("branch-name", "", "its name, e.g. \"Central Library\"")
	admin := fs.String("admin", "admin", "the administrator's username")
	adminName := fs.String("admin-name", "Administrator", "the administrator's name as staff see it")
	tz := fs.String("time-zone", "UTC", "the library's time zone, e.g. Europe/London: loans fall due at closing time there")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("init takes no arguments, got %q", fs.Args())}
	}
	if *branch == "" || *branchName == "" {
		return usageError{"init needs --branch CODE and --branch-name NAME (the first branch)"}
	}
	if _, err := time.LoadLocation(*tz); err != nil || *tz == "Local" || *tz == "" {
		return usageError{fmt.Sprintf("--time-zone %q is not a time zone name; use one such as Europe/London, America/New_York or UTC", *tz)}
	}
	// The password first: a library is created only once it can have its
	// administrator.
	password, err := readPassword(stdin, stderr)
	if err != nil {
		return err
	}
	d, err := dbf.open(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	var b library.Branch
	err = d.Write(ctx, func(tx *db.Tx) error {
		branches, err := library.ListBranches(tx)
		if err != nil {
			return err
		}
		if len(branches) > 0 {
			return stacks.Errorf(stacks.ECONFLICT, "%s is already set up (it has the branch %s); change it on the administration pages, or add staff with stacks user add.", db.DisplayName(dbf.path), branches[0].Code)
		}
		if b, err = library.CreateBranch(tx, stacks.System, *branch, *branchName); err != nil {
			return err
		}
		for _, c := range [][2]string{{"ADULT", "Adult"}, {"CHILD", "Child"}} {
			if _, err := patrons.CreateCategory(tx, stacks.System, c[0], c[1]); err != nil {
				return err
			}
		}
		if _, err := catalog.CreateItemType(tx, stacks.System, "BOOK", "Book", false); err != nil {
			return err
		}
		if _, err := catalog.CreateItemType(tx, stacks.System, "REF", "Reference", true); err != nil {
			return err
		}
		if _, err := circulation.SaveRule(tx, stacks.System, circulation.Rule{
			LoanPeriod: 21, LoanUnit: "days", MaxLoans: 20, Renewals: 2, HoldPickupDays: 7,
		}); err != nil {
			return err
		}
		if err := library.SetPreference(tx, "timezone", *tz); err != nil {
			return err
		}
		if err := library.SetPreference(tx, "library_name", b.Name); err != nil {
			return err
		}
		_, err = staff.Create(tx, staff.NewUser{Username: *admin, DisplayName: *adminName, Password: password, Role: staff.RoleAdmin, BranchCode: b.Code})
		return err
	})
	if err != nil {
		return userFacing(err)
	}
	dbGiven := false
	fs.Visit(func(f *flag.Flag) { dbGiven = dbGiven || f.Name == "db" })
	serve, note := serveCommand(dbf.path, dbGiven, isTerminal(stdout))
	fmt.Fprintf(stdout, "library set up in %s: branch %s (%s), patron categories ADULT and CHILD, item types BOOK and REF,\n"+
		"one circulation rule (21 days, 20 loans, 2 renewals, no fines), time zone %s, administrator %q.\n"+
		"Next: %s, sign in as %s, and see Administration (rules, calendar, staff accounts);\n"+
		"stacks import to load the catalogue.\n%s", db.DisplayName(dbf.path), b.Code, b.Name, *tz, *admin, serve, *admin, note)
	return nil
}

// serveCommand is the command that serves the library init just set up at
// target, to be copied as it is, and a note to print after it if any.
// Without --db (STACKS_DB, or stacks.db) it is plain stacks serve, which reads
// the same. A PostgreSQL URL with a password is shown whole only on a
// terminal, where the administrator typed it a moment ago and copies the
// command from; written to a file or a log it is masked, and the note says
// how to give it.
func serveCommand(target string, dbGiven, terminal bool) (cmd, note string) {
	switch {
	case !dbGiven:
		return "stacks serve", ""
	case db.DisplayName(target) == target || terminal:
		return "stacks serve --db " + shellQuote(target), ""
	}
	return "stacks serve --db " + shellQuote(db.DisplayName(target)),
		"(The password is masked here, as this output is not a terminal: give --db the URL init was given,\n" +
			"or set STACKS_DB to it, or leave the password out of the URL and put it in ~/.pgpass or PGPASSWORD.)\n"
}
