package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/patrons"
)

const patronsUsage = "patrons import [--db FILE] [--match card|external_id] [--dry-run] [--skip-bad] [--clear-empty] [--overwrite-pins] [--default-category CODE] [--default-branch CODE] [--default-expiry YYYY-MM-DD] FILE.csv"

// runPatrons manages patrons from a shell: today, loading them from a CSV file
// (a school's yearly list of students). The administration page
// /admin/patrons/import does the same.
func runPatrons(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"usage: stacks " + patronsUsage}
	}
	switch args[0] {
	case "import":
		return runPatronsImport(ctx, args[1:], stdout, stderr)
	case "-h", "--help":
		fmt.Fprintln(stdout, "Usage: stacks "+patronsUsage)
		return nil
	}
	return usageError{"usage: stacks " + patronsUsage}
}

// errNothingImported: bad rows stopped the load (or would have, in a dry run);
// they are printed already.
var errNothingImported = errors.New("nothing was imported")

func runPatronsImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cols strings.Builder
	for _, c := range patrons.LoadColumns {
		help := ""
		if c.Help != "" {
			help = ": " + c.Help
		}
		fmt.Fprintf(&cols, "  %-12s %s%s\n", c.Name, strings.Join(c.Aliases, ", "), help)
	}
	fs := newFlagSet("patrons import", patronsUsage,
		"Creates and updates patrons from a CSV file (RFC 4180, UTF-8; Excel's \"CSV UTF-8\"\n"+
			"with its byte order mark is fine), in one transaction. The first row names the\n"+
			"columns, in any order and letter case; each may be called by any of its names:\n\n"+cols.String()+"\n"+
			"A row matching a patron (by card, or by external id with --match external_id)\n"+
			"updates the columns the file has; an empty cell leaves the field as it is\n"+
			"(--clear-empty clears first name, email, phone, address, notes, external id).\n"+
			"Other rows create patrons: they need a card, a surname, a category and a home\n"+
			"branch (or --default-category, --default-branch); without an expiry the card\n"+
			"is valid for the category's months from today.\n\n"+
			"Every row is checked first. If any row is bad, nothing is imported (exit status\n"+
			"1) and each bad row is printed with its line and every problem; --skip-bad\n"+
			"imports the good rows only. --dry-run prints what would happen and writes\n"+
			"nothing. A PIN column is hashed with bcrypt before the transaction: expect\n"+
			"several minutes per thousand PINs. It sets new patrons' PINs only, unless\n"+
			"--overwrite-pins. A header row with no comma and with semicolons (or tabs)\n"+
			"means the file is separated by them. An expiry before today is a problem.\n\n"+
			"The file is written in one transaction: every desk's checkout waits for it,\n"+
			"about a second at 20,000 rows and 10 to 15 at 100,000 (the most taken).\n"+
			"The administration page takes at most 20,000; load a longer file when the\n"+
			"library is closed.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	match := fs.String("match", patrons.MatchCard, "the column that finds the patron a row is about: card or external_id")
	dryRun := fs.Bool("dry-run", false, "check every row and print what would happen; write nothing")
	skipBad := fs.Bool("skip-bad", false, "import the good rows when some are bad (otherwise nothing is imported)")
	clearEmpty := fs.Bool("clear-empty", false, "an empty cell clears the field of a patron the row updates")
	overwritePINs := fs.Bool("overwrite-pins", false, "the pin column replaces existing patrons' PINs too (otherwise it sets new patrons' PINs only)")
	defCategory := fs.String("default-category", "", "category code for new patrons whose row has none")
	defBranch := fs.String("default-branch", "", "home branch code for new patrons whose row has none")
	defExpiry := fs.String("default-expiry", "", "expiry (YYYY-MM-DD) for new patrons whose row has none")
	verbose := fs.Bool("v", false, "print every row's outcome, not only the bad rows (a dry run always does)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"give one CSV file: stacks " + patronsUsage}
	}
	// Read whole (at most some 20 MB), so that the rows are counted before the
	// load takes the write transaction.
	file, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	if n := bytes.Count(file, []byte{'\n'}) - 1; n > patrons.WebLoadRows && !*dryRun {
		fmt.Fprintf(stderr, "warning: about %d rows; the desks' checkouts will wait while they are written in one transaction (some 10 to 15 seconds at 100,000 rows). Load a file this long when the library is closed, or split it.\n", n)
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := branchesOf(ctx, d, dbf.path); err != nil {
		return err
	}
	res, err := patrons.Load(ctx, d, bytes.NewReader(file), patrons.LoadOptions{
		Actor: stacks.System, Match: *match, DryRun: *dryRun, SkipBad: *skipBad, ClearEmpty: *clearEmpty, OverwritePINs: *overwritePINs,
		DefaultCategory: *defCategory, DefaultBranch: *defBranch, DefaultExpiry: *defExpiry,
	})
	if res == nil || (err != nil && len(res.Rows) == 0) {
		return userFacing(err)
	}
	switch res.Delimiter {
	case ';':
		fmt.Fprintln(stdout, "the file is separated by semicolons; read that way")
	case '\t':
		fmt.Fprintln(stdout, "the file is separated by tabs; read that way")
	}
	if len(res.Unknown) > 0 {
		fmt.Fprintf(stdout, "columns not recognised, not read: %s\n", strings.Join(res.Unknown, ", "))
	}
	for _, row := range res.Rows {
		switch {
		case len(row.Problems) > 0:
			fmt.Fprintf(stdout, "line %d %s: %s\n", row.Line, row.Key(), strings.Join(row.Problems, " | "))
		case *dryRun || *verbose:
			what := row.Action
			if len(row.Details) > 0 {
				what += " " + strings.Join(row.Details, "; ")
			}
			fmt.Fprintf(stdout, "line %d %s: %s\n", row.Line, row.Key(), what)
		}
	}
	verb := "imported"
	if *dryRun {
		verb = "dry run, nothing written"
	} else if !res.Imported {
		verb = "nothing imported"
	}
	created, updated := "created", "updated"
	if !res.Imported {
		created, updated = "to create", "to update"
	}
	fmt.Fprintf(stdout, "%s: %d rows, %d %s, %d %s, %d unchanged, %d bad (%s)\n",
		fs.Arg(0), len(res.Rows), res.Created, created, res.Updated, updated, res.Unchanged, res.Bad, verb)
	if res.PINs > 0 {
		pins := "PINs set"
		if !res.Imported {
			pins = "PINs to set"
		}
		fmt.Fprintf(stdout, "%s: %d\n", pins, res.PINs)
	}
	if res.Imported {
		fmt.Fprintf(stdout, "checked in %s, PINs hashed in %s, written in one transaction of %s\n",
			res.CheckTime.Round(1e6), res.HashTime.Round(1e6), res.WriteTime.Round(1e6))
	}
	if err != nil {
		if stacks.ErrorCode(err) == stacks.EINTERNAL {
			return err
		}
		fmt.Fprintln(stderr, stacks.ErrorMessage(err))
		return errNothingImported
	}
	return nil
}
