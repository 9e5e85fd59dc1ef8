package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/stackstest"
)

// TestCGICost times a CGI request side by side in one run (make
// cgi-bench): stacks under Go's CGI host beside the floors of scripts/cgibench/floors,
// and stacks through lighttpd as CGI and as FastCGI beside the persistent server,
// each web server on its own fresh demo library, the targets alternating request by
// request (scripts/cgibench). Only with STACKS_CGI_BENCH=N (requests per page and
// target); STACKS_CGI_BINS adds other stacks builds. The table goes to the test's
// log and to bin/cgi-bench.md.
func TestCGICost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("STACKS_CGI_BENCH"))
	if n <= 0 {
		t.Skip("a benchmark: make cgi-bench runs it (STACKS_CGI_BENCH=N)")
	}
	root := stackstest.ModuleRoot(t)
	db := filepath.Join(t.TempDir(), "stacks.db")
	if out, err := exec.Command(stacksBin, "demo", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("stacks demo --db %s: %v\n%s", db, err, out)
	}
	persistent := startServer(t)
	cgiSite := startLighttpd(t, httpdCGI, lighttpdCGIMount)
	fcgiSite := startLighttpd(t, httpdFastCGI, lighttpdFCGIMount)

	args := []string{"run", "./scripts/cgibench", "-db", db, "-n", strconv.Itoa(n), "-floors",
		"-url", "lighttpd-cgi=" + cgiSite.BaseURL, "-url", "lighttpd-fcgi=" + fcgiSite.BaseURL,
		"-url", "persistent=" + persistent.BaseURL, stacksBin}
	args = append(args, strings.Fields(os.Getenv("STACKS_CGI_BINS"))...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	start, startLoad := time.Now(), loadAverage()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	report := "Measured " + time.Now().UTC().Format("2006-01-02 15:04 UTC") + " in " + time.Since(start).Round(time.Second).String() +
		", load average (1, 5, 15 min) " + startLoad + " at the start, " + loadAverage() + " at the end\n\n" + string(out)
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "cgi-bench.md"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + report)
}
