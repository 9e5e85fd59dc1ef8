package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/stackstest"
)

// lighttpdPath is Debian's lighttpd, installed by scripts/test-deps.sh: the real web
// server the suite runs Stacks behind, as CGI and as FastCGI.
const lighttpdPath = "/usr/sbin/lighttpd"

// The sub-paths lighttpd serves Stacks at in the tests: a CGI program under
// /cgi-bin/, as shared hosts do, and FastCGI under a path of its own. (An empty
// mount is the root of the site; lighttpdConfig writes that too.)
const (
	lighttpdCGIMount  = "/cgi-bin/stacks"
	lighttpdFCGIMount = "/library"
)

// httpdMode is how lighttpd runs Stacks.
type httpdMode int

const (
	// httpdCGI: mod_cgi starts `stacks` once per request (it sees GATEWAY_INTERFACE).
	httpdCGI httpdMode = iota
	// httpdFastCGI: mod_fastcgi starts one `stacks fcgi` itself (bin-path) and passes it
	// every request over a unix socket.
	httpdFastCGI
)

func (m httpdMode) String() string {
	if m == httpdFastCGI {
		return "FastCGI"
	}
	return "CGI"
}

// mount is where the tests serve this mode.
func (m httpdMode) mount() string {
	if m == httpdFastCGI {
		return lighttpdFCGIMount
	}
	return lighttpdCGIMount
}

// lighttpdSite is what the configuration of one test site needs.
type lighttpdSite struct {
	mode    httpdMode
	mount   string // "" (the site root) or "/cgi-bin/stacks", without a trailing slash
	port    int
	bin     string // the stacks binary
	db      string // the database file, or on PostgreSQL its URL
	dir     string // lighttpd's own files: the document root, the error log
	sockDir string // where lighttpd puts the FastCGI socket
	user    string // server.username and groupname; empty to stay as the current user
}

// errorLog is lighttpd's error log, where CGI programs' standard error goes too.
// lighttpd opens it after dropping to server.username, so it is in a folder of
// that user's.
func (s lighttpdSite) errorLog() string { return filepath.Join(s.dir, "log", "error.log") }

// lighttpdConfig writes the site's lighttpd.conf. The Stacks parts are those of
// docs/deploy.md ("lighttpd at a sub-path: the configuration the test suite runs";
// at the root, "lighttpd (mod_cgi)" and "lighttpd (mod_fastcgi)"), with the paths of
// the test; TestLighttpdConfigDocumented keeps the two in step.
func lighttpdConfig(s lighttpdSite) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server.document-root = %q\n", filepath.Join(s.dir, "www"))
	fmt.Fprintf(&b, "server.bind = \"127.0.0.1\"\nserver.port = %d\n", s.port)
	fmt.Fprintf(&b, "server.errorlog = %q\n", s.errorLog())
	if s.user != "" {
		fmt.Fprintf(&b, "server.username = %q\nserver.groupname = %q\n", s.user, s.user)
	}
	b.WriteString(`mimetype.assign = ( ".html" => "text/html" )` + "\n")
	env := fmt.Sprintf(`"STACKS_DB" => %q`, s.db)
	switch {
	case s.mode == httpdCGI && s.mount == "":
		b.WriteString(`server.modules += ( "mod_alias", "mod_cgi", "mod_setenv" )` + "\n")
		// The trailing slash makes lighttpd find the binary as the script and pass the
		// rest of the path as PATH_INFO.
		fmt.Fprintf(&b, "alias.url = ( \"/\" => %q )\ncgi.assign = ( \"\" => \"\" )\nsetenv.add-environment = ( %s )\n", s.bin+"/", env)
	case s.mode == httpdCGI:
		b.WriteString(`server.modules += ( "mod_alias", "mod_cgi", "mod_setenv" )` + "\n")
		fmt.Fprintf(&b, "$HTTP[\"url\"] =~ %q {\n", "^"+regexp.QuoteMeta(s.mount)+"(/|$)")
		fmt.Fprintf(&b, "    alias.url = ( %q => %q )\n    cgi.assign = ( \"\" => \"\" )\n    setenv.add-environment = ( %s )\n}\n", s.mount, s.bin, env)
	default:
		b.WriteString(`server.modules += ( "mod_fastcgi" )` + "\n")
		prefix, fixRoot := s.mount, ""
		if prefix == "" {
			prefix, fixRoot = "/", "\n        \"fix-root-scriptname\" => \"enable\","
		} else {
			// Go's FastCGI server does not pass SCRIPT_NAME on: stacks fcgi is told
			// its base path.
			env += fmt.Sprintf(`, "STACKS_BASE_PATH" => %q`, s.mount)
		}
		fmt.Fprintf(&b, `fastcgi.server = ( %q => ((
        "socket"          => %q,
        "bin-path"        => %q,
        "bin-environment" => ( %s ),
        "max-procs"       => 1,
        "check-local"     => "disable",%s
)))
`, prefix, filepath.Join(s.sockDir, "stacks.sock"), s.bin+" fcgi", env, fixRoot)
	}
	return b.String()
}

// startLighttpd starts Debian's lighttpd on a free port of 127.0.0.1, serving Stacks
// in the given mode at mount, on a fresh demo library. Run as root, lighttpd drops to
// www-data, as on a Debian web server, and the database belongs to that user. The
// returned server's BaseURL includes the mount, and its Dir holds stacks.db, as
// startServer's does, so the desk session runs unchanged. lighttpd (and whatever it
// started) is stopped when the test ends; its error log is printed if the test
// failed.
func startLighttpd(t testing.TB, mode httpdMode, mount string) *server {
	t.Helper()
	if _, err := os.Stat(lighttpdPath); err != nil {
		t.Fatalf("lighttpd not found at %s (%v): run scripts/test-deps.sh (or make test), which installs Debian's lighttpd", lighttpdPath, err)
	}
	// A short directory of its own (not t.TempDir, whose parents only root can
	// enter): a unix socket's path has a length limit, and www-data must reach
	// the binary and the database.
	dir, err := os.MkdirTemp("", "stacks-httpd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	site := lighttpdSite{mode: mode, mount: mount, dir: dir, bin: filepath.Join(dir, "stacks"),
		sockDir: filepath.Join(dir, "run"), db: filepath.Join(dir, "data", "stacks.db")}
	for _, d := range []string{filepath.Join(dir, "www"), filepath.Dir(site.errorLog()), site.sockDir, filepath.Dir(site.db)} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := linkOrCopy(stacksBin, site.bin); err != nil {
		t.Fatalf("putting stacks where lighttpd can run it: %v", err)
	}
	pg := dbtest.Engine() == db.Postgres
	if pg {
		// A database on the test cluster, reached through its Unix socket,
		// which any local user may open.
		site.db = demoDB(t, "")
	} else if out, err := exec.Command(site.bin, "demo", "--db", site.db).CombinedOutput(); err != nil {
		t.Fatalf("stacks demo --db %s: %v\n%s", site.db, err, out)
	}
	if os.Geteuid() == 0 {
		site.user = "www-data"
		u, err := user.Lookup(site.user)
		if err != nil {
			t.Fatalf("lighttpd would run as root: user %s not found (%v); Debian's base system has it", site.user, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// SQLite writes its -wal and -shm files beside the database: the CGI
		// user needs the directory as well as the file (docs/deploy.md).
		owned := []string{filepath.Dir(site.errorLog()), site.sockDir, filepath.Join(dir, "data")}
		if !pg {
			owned = append(owned, site.db)
		}
		for _, p := range owned {
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if site.port, err = stackstest.FreePort(); err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		srv, err := launchLighttpd(t, site)
		if err == nil {
			return srv
		}
		lastErr = err
		// Someone took the port between freePort and lighttpd's bind: try another.
		if !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	t.Fatalf("starting lighttpd (%s at %q): %v", mode, mount, lastErr)
	return nil
}

// launchLighttpd runs lighttpd in the foreground with the site's configuration and
// waits until Stacks answers /healthz through it.
func launchLighttpd(t testing.TB, site lighttpdSite) (*server, error) {
	conf := filepath.Join(site.dir, "lighttpd.conf")
	text := lighttpdConfig(site)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	errLog := site.errorLog()
	_ = os.Remove(errLog)
	out := &stackstest.Buffer{}
	cmd := exec.Command(lighttpdPath, "-D", "-f", conf)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so that the stop also reaches a FastCGI process or a
	// CGI request lighttpd left behind; killed with the test binary.
	cmd.SysProcAttr = groupProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", lighttpdPath, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	logs := func() string {
		b, err := os.ReadFile(errLog)
		if err != nil {
			b = []byte("(no error log: " + err.Error() + ")")
		}
		return fmt.Sprintf("--- lighttpd.conf ---\n%s--- lighttpd error log ---\n%s\n--- lighttpd output ---\n%s", text, b, out.String())
	}
	stop := func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(stopTimeout):
				t.Errorf("lighttpd did not exit within %v of SIGTERM; killing it", stopTimeout)
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		// lighttpd stops its FastCGI process itself; this only catches one that
		// outlived it.
		killGroup(cmd.Process.Pid)
	}

	root := fmt.Sprintf("http://127.0.0.1:%d", site.port)
	if err := stackstest.WaitHealthy(root+site.mount+"/healthz", startTimeout, exited); err != nil {
		stop()
		return nil, fmt.Errorf("through %s%s: %w (exit: %v)\n%s", root, site.mount, err, waitErr, logs())
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("lighttpd serving stacks as %s at %q:\n%s", site.mode, site.mount, logs())
		}
	})
	return &server{BaseURL: root + site.mount, Dir: filepath.Join(site.dir, "data"), DB: site.db, out: out}, nil
}

// linkOrCopy puts a hard link to src at dst, or a copy where a link cannot be made
// (another file system), keeping it executable.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return os.Chmod(dst, 0o755)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return errors.Join(out.Close(), os.Chmod(dst, 0o755))
}

// TestLighttpdConfigDocumented: docs/deploy.md shows the lighttpd configuration the
// suite runs, with a real host's paths. Every line lighttpdConfig writes for Stacks
// (all but the test server's own settings), in each mode at the mount the tests
// use, must be in one of the page's lighttpd blocks, so the documentation is what
// was tested.
func TestLighttpdConfigDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(stackstest.ModuleRoot(t), "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	normal := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	blocks := strings.Split(string(b), "```lighttpd\n")[1:]
	for _, mode := range []httpdMode{httpdCGI, httpdFastCGI} {
		t.Run(mode.String(), func(t *testing.T) {
			conf := lighttpdConfig(lighttpdSite{mode: mode, mount: mode.mount(), bin: "/usr/local/bin/stacks",
				db: "/var/lib/stacks/library.db", sockDir: "/run/lighttpd"})
			var want []string
			for _, line := range strings.Split(conf, "\n") {
				if line = normal(line); line != "" && (!strings.HasPrefix(line, "server.") || strings.HasPrefix(line, "server.modules")) && !strings.HasPrefix(line, "mimetype.") {
					want = append(want, line)
				}
			}
			var closest []string
			for _, block := range blocks {
				block, _, _ = strings.Cut(block, "```")
				documented := map[string]bool{}
				for _, line := range strings.Split(block, "\n") {
					documented[normal(line)] = true
				}
				var missing []string
				for _, line := range want {
					if !documented[line] {
						missing = append(missing, line)
					}
				}
				if missing == nil {
					return
				}
				if closest == nil || len(missing) < len(closest) {
					closest = missing
				}
			}
			t.Errorf("docs/deploy.md: none of its %d lighttpd blocks is the %s configuration the tests run at %q; the closest lacks:\n%s\n--- the tests' configuration ---\n%s",
				len(blocks), mode, mode.mount(), strings.Join(closest, "\n"), conf)
		})
	}
}
