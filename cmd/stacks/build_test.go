package main_test

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/stackstest"
)

// TestProductionBuild builds stacks with the Dockerfile's own build command (the
// build stage's RUN line that calls scripts/build.sh, read from the Dockerfile,
// not copied here) and checks what the container relies on: a static binary (the
// image has no libc), stamped with the release, that serves the demo, answers its
// own healthcheck and exits cleanly on SIGTERM (docker stop). Then it builds
// the Dockerfile's last stage from that same layout and runs it as the image
// runs (TestProductionBuild/Container).
func TestProductionBuild(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "image", "root", "stacks")
	root := stackstest.ModuleRoot(t)

	cmdline := dockerfileBuildCommand(t, filepath.Join(root, "Dockerfile"))
	// The build runs scripts/build.sh, which stamps VERSION: this test reads both
	// so that Go's test cache runs it again when either changes (it sees the files
	// a test opens, not those a child process opens).
	for _, f := range []string{"scripts/build.sh", "VERSION"} {
		if _, err := os.ReadFile(filepath.Join(root, f)); err != nil {
			t.Fatalf("the build's %s: %v", f, err)
		}
	}
	cmdline = strings.ReplaceAll(cmdline, "/image", filepath.Join(dir, "image"))
	build := exec.Command("sh", "-c", cmdline)
	build.Dir = root
	// The container build passes an empty STACKS_VERSION unless --build-arg sets it.
	build.Env = append(os.Environ(), "STACKS_VERSION=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's build command %q: %v\n%s", cmdline, err, out)
	}

	t.Run("Static", func(t *testing.T) {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatalf("reading %s as ELF: %v", bin, err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("binary has a PT_INTERP program header (needs a dynamic loader); it must be static for the image")
			}
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			t.Fatalf("reading imported libraries: %v", err)
		}
		if len(libs) > 0 {
			t.Errorf("binary imports shared libraries %v; it must be static for the image", libs)
		}
	})

	t.Run("Version", func(t *testing.T) {
		out, err := run(t, bin, "version")
		if err != nil {
			t.Fatalf("stacks version: %v\n%s", err, out)
		}
		release, err := os.ReadFile(filepath.Join(root, "VERSION"))
		if err != nil {
			t.Fatal(err)
		}
		want := "stacks " + strings.TrimSpace(string(release))
		if !strings.HasPrefix(out, want) {
			t.Errorf("stacks version printed %q, want it to start with %q (the VERSION file's release, stamped by scripts/build.sh)", out, want)
		}
	})

	t.Run("ServeHealthcheckStop", func(t *testing.T) {
		port, err := stackstest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		db := filepath.Join(dir, "data", "stacks.db")
		if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
			t.Fatal(err)
		}

		var out stackstest.Buffer
		srv := exec.Command(bin, "serve", "--demo", "--db", db, "--addr", addr)
		srv.Stdout = &out
		srv.Stderr = &out
		if err := srv.Start(); err != nil {
			t.Fatalf("starting stacks serve: %v", err)
		}
		exited := make(chan struct{})
		var waitErr error
		go func() {
			waitErr = srv.Wait()
			close(exited)
		}()
		t.Cleanup(func() {
			select {
			case <-exited:
			default:
				_ = srv.Process.Kill()
				<-exited
			}
			if t.Failed() {
				t.Logf("--- stacks serve output ---\n%s", out.String())
			}
		})

		healthz := "http://" + addr + "/healthz"
		if err := stackstest.WaitHealthy(healthz, 60*time.Second, exited); err != nil {
			select {
			case <-exited:
				err = fmt.Errorf("%w: %v", err, waitErr)
			default:
			}
			t.Fatalf("stacks serve --demo --db %s --addr %s: %v", db, addr, err)
		}

		if out, err := run(t, bin, "healthcheck", "--url", healthz); err != nil {
			t.Errorf("stacks healthcheck --url %s against a healthy server: %v\n%s", healthz, err, out)
		}
		bad := "http://127.0.0.1:1/healthz"
		if out, err := run(t, bin, "healthcheck", "--url", bad); err == nil {
			t.Errorf("stacks healthcheck --url %s (nothing listening) exited 0, want non-zero\n%s", bad, out)
		} else if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("stacks healthcheck --url %s hung: %v", bad, err)
		}

		if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatalf("sending SIGTERM: %v", err)
		}
		select {
		case <-exited:
			if waitErr != nil {
				t.Errorf("stacks serve after SIGTERM: %v, want exit status 0", waitErr)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("stacks serve did not exit within 10s of SIGTERM")
		}
	})

	t.Run("Container", func(t *testing.T) { testContainer(t, root, dir) })
}

// dockerfileBuildCommand returns the first command of the Dockerfile's RUN
// instruction that runs scripts/build.sh (up to its first "&&"): the command the
// image is built with.
func dockerfileBuildCommand(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines, then look at each instruction.
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "RUN ")
		if !ok || !strings.Contains(rest, "scripts/build.sh") {
			continue
		}
		first, _, _ := strings.Cut(rest, "&&")
		first = strings.TrimSpace(first)
		if !strings.Contains(first, "scripts/build.sh --image /image") {
			t.Fatalf("%s: the RUN instruction's first command %q must be the build (scripts/build.sh --image /image)", path, first)
		}
		return first
	}
	t.Fatalf("%s: no RUN instruction runs scripts/build.sh", path)
	return ""
}

// run runs the binary with a time limit and returns its combined output.
func run(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if ctx.Err() != nil {
		return string(out), ctx.Err()
	}
	return string(out), err
}

// TestBinaryDependencies: every CGI request starts this binary afresh, and every
// package it links initialises itself first, whether the request needs it or
// not. The binary must not link the Prometheus client, protobuf or
// procfs (package metrics writes the text format itself; they were a quarter of
// the start-up's package initialisation), nor the browser-test driver.
func TestBinaryDependencies(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/stacks")
	cmd.Dir = stackstest.ModuleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/stacks: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps ./cmd/stacks listed %d packages: %q", len(deps), deps)
	}
	for _, dep := range deps {
		for _, banned := range []string{"github.com/prometheus/", "google.golang.org/protobuf/", "github.com/playwright-community/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("the binary links %s: its initialisation would run in every CGI request", dep)
			}
		}
	}
}
