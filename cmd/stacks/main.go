// Command stacks is the Stacks library system in one binary: it serves the staff
// site, migrates the database, creates the demo library and manages staff accounts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // the library's time zone must load in a minimal container too
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "serve the staff site over HTTP", runServe},
		{"migrate", "bring a database's schema up to date", runMigrate},
		{"init", "set up a new library: first branch, categories, item types, a rule, the administrator", runInit},
		{"demo", "create the demo library in a new database", runDemo},
		{"import", "import MARC 21 records (ISO 2709 or MARCXML)", runImport},
		{"export", "export the catalogue as MARC 21", runExport},
		{"user", "manage staff accounts (user add)", runUser},
		{"patrons", "load patrons from a CSV file (patrons import)", runPatrons},
		{"sip-account", "manage the accounts self-check machines and sorters log in with (sip-account add, list, set)", runSIPAccount},
		{"cgi", "serve one request as a CGI program (automatic when GATEWAY_INTERFACE is set)", runCGI},
		{"fcgi", "serve the staff site over FastCGI (lighttpd, Apache mod_fcgid or mod_proxy_fcgi)", runFCGI},
		{"sip-client", "test a SIP2 connection: log in, send messages, print the exchange", runSIPClient},
		{"load", "load-test a server on this machine: check-out/check-in by N desks or SIP2 terminals", runLoad},
		{"notices", "notices run: the daily notices and email sending, once (cron for CGI installs; --dry-run)", runNotices},
		{"daily", "the daily jobs (long overdues to lost, privacy), then notices run, once (cron for CGI installs)", runDaily},
		{"privacy", "privacy run: anonymise old loan history and purge inactive patrons (--dry-run); privacy export --card: a patron's data as JSON", runPrivacy},
		{"check", "verify a database: the engine's integrity checks and the circulation invariants", runCheck},
		{"backup", "write a consistent copy of a live database to a new file", runBackup},
		{"copy", "copy a whole library between databases: SQLite to PostgreSQL, or back (--from, --to)", runCopy},
		{"healthcheck", "check that a running server answers (for container health checks)", runHealthcheck},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	args := os.Args[1:]
	if os.Getenv("GATEWAY_INTERFACE") != "" && (len(args) == 0 || args[0] != "cgi") {
		// Started by a web server as a CGI program (it may pass a query as arguments).
		args = []string{"cgi"}
	}
	err := run(ctx, args, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "stacks:", err)
		}
		os.Exit(exitCode(err))
	}
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func exitCode(err error) int {
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0 // --help asked for the usage, and got it
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Stacks: a small, fast integrated library system.

Usage:
  stacks <command> [flags]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run "stacks <command> --help" for a command's flags. Every flag can also be set
by an environment variable, named in its help (STACKS_DB, STACKS_ADDR, ...).

Quick start:
  stacks serve --demo        a demo library at http://localhost:8080 (desk / desk)
`)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return usageError{"no command given"}
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		usage(stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	usage(stderr)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

// newFlagSet returns a flag set whose --help explains the command.
func newFlagSet(name, synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("stacks "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: stacks %s\n\n%s\n\nFlags:\n", synopsis, description)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	return nil
}

// env returns the environment variable's value, or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// envBool reads a boolean environment variable ("1", "true", "yes").
func envBool(name string) bool {
	switch env(name, "") {
	case "1", "true", "TRUE", "True", "yes", "on":
		return true
	}
	return false
}
