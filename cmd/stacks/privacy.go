package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/privacy"
)

const privacyUsage = "usage: stacks privacy run [--dry-run] | stacks privacy export --card CARD [--out FILE]"

func runPrivacy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{privacyUsage}
	}
	switch args[0] {
	case "run":
		return runPrivacyRun(ctx, args[1:], stdout, stderr)
	case "export":
		return runPrivacyExport(ctx, args[1:], stdout, stderr)
	case "-h", "--help":
		fmt.Fprintln(stdout, "Usage: stacks privacy run [--dry-run]\n       stacks privacy export --card CARD [--out FILE]\n\nRun \"stacks privacy run --help\" or \"stacks privacy export --help\" for their flags.")
		return nil
	}
	return usageError{privacyUsage}
}

func runPrivacyRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("privacy run", "privacy run [--dry-run]",
		"Anonymises the loan history returned more than the anonymise_loans_after_days\n"+
			"preference ago, then purges the patrons inactive for purge_inactive_after_years,\n"+
			"whose card expired that long ago too, who owe nothing, are not in credit and\n"+
			"have nothing out (docs/privacy.md); a preference of 0 turns\n"+
			"its step off. stacks serve does this daily; for CGI installs, from cron, e.g.:\n"+
			"  30 3 * * *  stacks privacy run --db /var/lib/stacks/library.db\n"+
			"With --dry-run it prints what it would do and changes nothing.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	dry := fs.Bool("dry-run", false, "count what would be anonymised and purged, and change nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("privacy run takes no arguments, got %q", fs.Args())}
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	res, err := privacy.Run(ctx, d, d.Now(), privacy.Options{DryRun: *dry})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, res.String())
	return nil
}

func runPrivacyExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("privacy export", "privacy export --card CARD [--out FILE]",
		"Writes everything the library holds about one patron as JSON (the GDPR right of\n"+
			"access): the patron (without the PIN's hash), loans not yet anonymised, holds,\n"+
			"ledger, notices, notice preferences and the audit entries about them. The export\n"+
			"is recorded in the audit log. The file is created readable by its owner only.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	card := fs.String("card", "", "the patron's card number")
	out := fs.String("out", "", "file to write (default: standard output); it must not exist")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("privacy export takes no arguments, got %q (name the patron with --card)", fs.Args())}
	}
	if *card == "" {
		return usageError{"privacy export: name the patron with --card CARD"}
	}
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	// The file is created first: an export that cannot be written is not
	// recorded as done.
	w := stdout
	var f *os.File
	if *out != "" {
		if f, err = os.OpenFile(filepath.Clean(*out), os.O_WRONLY|os.O_CREATE|os.O_EXCL, db.PrivateMode); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		w = f
	}
	var e *privacy.Export
	err = d.Write(ctx, func(tx *db.Tx) error {
		var err error
		e, err = privacy.ExportByCard(tx, stacks.Actor{Name: "cli"}, *card)
		return err
	})
	if err == nil {
		var b []byte
		if b, err = json.MarshalIndent(e, "", "  "); err == nil {
			_, err = w.Write(append(b, '\n'))
		}
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return err
		}
		fmt.Fprintf(stderr, "Wrote %s.\n", *out)
	}
	return err
}
