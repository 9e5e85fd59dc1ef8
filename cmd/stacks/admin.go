package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/staff"
	"golang.org/x/term"
)

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", "migrate [--db FILE]",
		"Creates the database if needed and applies any migrations it lacks, then\n"+
			"builds what the catalogue derives from its records' MARC when an upgrade\n"+
			"left it to build (the index of 035 numbers imports match by).", stderr)
	var dbf dbFlags
	dbf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := db.Open(dbf.path, db.Options{ReadConns: 1, Synchronous: dbf.synchronous})
	if err != nil {
		return err
	}
	defer d.Close()
	n, err := d.Migrate(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(stdout, "%s is up to date\n", db.DisplayName(dbf.path))
	} else {
		fmt.Fprintf(stdout, "%s: applied %d migration(s)\n", db.DisplayName(dbf.path), n)
	}
	// Built here, by the administrator who upgrades, rather than by the first
	// import, whose cataloguer would wait for it.
	if err := catalog.BuildSystemNumbers(ctx, d); err != nil {
		return fmt.Errorf("index the catalogue's 035 numbers: %w", err)
	}
	return nil
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", "demo --db FILE [--titles N] [--patrons N]",
		"Creates the demo library (docs/desk-session.md) in a new database:\n"+
			"three branches, staff desk/desk and admin/admin, fixture patrons and items,\n"+
			"and a generated catalogue. Refuses a database that already has data.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	titles := fs.Int("titles", 2000, "generated titles beside the fixtures (e.g. 100000 for benchmarks)")
	patrons := fs.Int("patrons", 500, "patrons in all, fixtures included")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := dbf.open(ctx, nil)
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	sum, err := demo.Create(ctx, d, demo.Options{Titles: *titles, Patrons: *patrons})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo library created in %s in %s: %d branches, %d staff, %d patrons, %d records, %d items, %d loans (%d overdue), %d holds\n",
		db.DisplayName(dbf.path), time.Since(start).Round(time.Millisecond), sum.Branches, sum.Staff, sum.Patrons, sum.Records, sum.Items, sum.Loans, sum.Overdue, sum.Holds)
	return nil
}

func runUser(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "user add --username NAME --name \"Full Name\" [--role circulation|admin] --branch CODE [--db FILE]"
	if done, err := addSubcommand(args, stdout, usage); done {
		return err
	}
	fs := newFlagSet("user add", usage,
		"Creates a staff account. The password is read from standard input (one line),\n"+
			"or from STACKS_PASSWORD; it is never taken as a flag, where other users could see it.", stderr)
	var dbf dbFlags
	dbf.register(fs)
	username := fs.String("username", "", "the sign-in name")
	name := fs.String("name", "", "the name staff see")
	role := fs.String("role", staff.RoleCirculation, "circulation or admin")
	branch := fs.String("branch", "", "code of the branch the account works at (e.g. CEN)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	d, password, err := libraryAndPassword(ctx, dbf, stderr)
	if err != nil {
		return err
	}
	defer d.Close()
	var u *staff.User
	err = d.Write(ctx, func(tx *db.Tx) error {
		u, err = staff.Create(tx, staff.NewUser{Username: *username, DisplayName: *name, Password: password, Role: *role, BranchCode: *branch})
		return err
	})
	if err != nil {
		return userFacing(err)
	}
	fmt.Fprintf(stdout, "created %s account %q (%s) at %s\n", u.Role, u.Username, u.DisplayName, u.BranchName)
	return nil
}

// libraryAndPassword opens a library that is set up (it has a branch, where an
// account works), then reads a new account's password: a mistake in --db is
// told before anyone types a password.
func libraryAndPassword(ctx context.Context, dbf dbFlags, stderr io.Writer) (*db.DB, string, error) {
	d, err := dbf.openLibrary(ctx, nil)
	if err != nil {
		return nil, "", err
	}
	password, err := func() (string, error) {
		if _, err := branchesOf(ctx, d, dbf.path); err != nil {
			return "", err
		}
		return readPassword(stdin, stderr)
	}()
	if err != nil {
		d.Close()
		return nil, "", err
	}
	return d, password, nil
}

// stdin is where a new account's password is read from; tests replace it.
var stdin = os.Stdin

// errNoPassword: neither STACKS_PASSWORD nor standard input gave a password.
var errNoPassword = usageError{"no password given: type it on standard input, or set STACKS_PASSWORD"}

// readPassword reads a new account's password from STACKS_PASSWORD, or else
// from in: never from a flag, where other users could see it. On a terminal it
// asks, twice, without echoing what is typed. From a pipe or a file it reads
// one line and prints nothing: no person is there to see a prompt, and it
// would land in the middle of the script's output.
func readPassword(in *os.File, stderr io.Writer) (string, error) {
	if password := os.Getenv("STACKS_PASSWORD"); password != "" {
		return password, nil
	}
	if fd := int(in.Fd()); term.IsTerminal(fd) {
		ask := func(prompt string) (string, error) {
			fmt.Fprint(stderr, prompt)
			p, err := term.ReadPassword(fd)
			fmt.Fprintln(stderr)
			return string(p), err
		}
		p, err := ask("Password: ")
		if err != nil || p == "" {
			return "", errNoPassword
		}
		again, err := ask("The same password again: ")
		if err != nil {
			return "", errNoPassword
		}
		if again != p {
			return "", usageError{"the two passwords differ: nothing was changed"}
		}
		return p, nil
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return "", errNoPassword
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// addSubcommand handles what is not "add" for the commands whose only
// subcommand is add (user, sip-account): done is true when there is nothing more
// to do (help was printed, or the usage is wrong: err).
func addSubcommand(args []string, stdout io.Writer, usage string) (done bool, err error) {
	switch {
	case len(args) > 0 && args[0] == "add":
		return false, nil
	case len(args) > 0 && (args[0] == "-h" || args[0] == "--help"):
		fmt.Fprintln(stdout, "Usage: stacks "+usage)
		return true, nil
	}
	return true, usageError{"usage: stacks " + usage}
}

func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("healthcheck", "healthcheck [--url URL]",
		"Asks a running server's /healthz and exits 0 if it answers 200 within the timeout.\n"+
			"Containers use it as their health check (no curl needed in the image).", stderr)
	url := fs.String("url", env("STACKS_HEALTH_URL", healthURL()), "health URL (STACKS_HEALTH_URL; default: /healthz on STACKS_ADDR's port on this host, under STACKS_BASE_PATH when set)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for an answer")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return usageError{fmt.Sprintf("--url %q: %v", *url, err)}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("unhealthy: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: %s answered %s", *url, resp.Status)
	}
	fmt.Fprintln(stdout, "healthy")
	return nil
}

// healthURL is the /healthz of the server that stacks serve, started with the
// same environment, runs: on STACKS_ADDR's port (its default :8080), on this
// host's loopback when STACKS_ADDR names no host or every host, under
// STACKS_BASE_PATH when that is set.
func healthURL() string {
	host, port, err := net.SplitHostPort(env("STACKS_ADDR", ":8080"))
	if err != nil {
		// serve cannot listen there either; ask its default.
		host, port = "", "8080"
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + healthBase() + "/healthz"
}

// healthBase is STACKS_BASE_PATH as stacks serve reads it, or "" when it is
// unset or not a base path (serve refuses to start with one).
func healthBase() string {
	base, err := basepath.Clean(env("STACKS_BASE_PATH", ""))
	if err != nil {
		return ""
	}
	return base
}

// version is set at build time with -ldflags "-X main.version=..."; otherwise the
// module version or VCS revision from the build info is used.
var version = ""

func versionString() string {
	v := version
	if v == "" {
		v = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok {
			if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v += "+" + s.Value[:12]
				}
			}
		}
	}
	return v
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", "Prints the version of this binary.", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "stacks %s (%s %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
