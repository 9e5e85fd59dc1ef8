package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/stackstest"
)

// testContainer builds the Dockerfile's last stage with buildah (daemonless,
// as root, vfs storage, chroot isolation), its build stage replaced by what
// scripts/build.sh --image laid out in dir/image (the Dockerfile's own build
// command, run by TestProductionBuild). Then it runs
// the image as a container runtime would: as the image's user, its root
// filesystem read-only, no /tmp, the data volume mounted on /data, with the
// image's environment; and checks that it serves /healthz, that
// `stacks healthcheck` finds it at STACKS_ADDR, and that without TMPDIR it
// refuses to start and says why.
func testContainer(t *testing.T, root, dir string) {
	if os.Geteuid() != 0 {
		t.Skip("building and running the image needs root (buildah, mount namespaces)")
	}
	for _, tool := range []string{"buildah", "unshare", "chroot", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: scripts/test-deps.sh installs buildah (Debian)", tool)
		}
	}
	dockerfile, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	last := strings.LastIndex(string(dockerfile), "\nFROM ")
	if last < 0 {
		t.Fatal("Dockerfile: no FROM line")
	}
	final := string(dockerfile[last+1:])
	if !strings.Contains(final, "COPY --from=build /image/root/ /") {
		t.Fatalf("the Dockerfile's last stage does not copy the build stage's /image/root/ (scripts/build.sh --image /image):\n%s", final)
	}
	stage := filepath.Join(t.TempDir(), "Dockerfile")
	if err := os.WriteFile(stage, []byte("FROM scratch AS build\nCOPY image /image\n"+final), 0o644); err != nil {
		t.Fatal(err)
	}

	storage := t.TempDir()
	buildah := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		args = append([]string{"--root", filepath.Join(storage, "root"), "--runroot", filepath.Join(storage, "run"), "--storage-driver", "vfs"}, args...)
		out, err := exec.CommandContext(ctx, "buildah", args...).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("buildah %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return strings.TrimSpace(string(out))
	}
	const image = "localhost/stacks-container-test:latest"
	buildah("bud", "--isolation", "chroot", "--format", "docker", "--quiet", "-f", stage, "-t", image, dir)

	var inspect struct {
		Docker struct {
			Config struct {
				User        string
				Env         []string
				Entrypoint  []string
				Cmd         []string
				WorkingDir  string
				Healthcheck struct{ Test []string }
			} `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte(buildah("inspect", "--type", "image", image)), &inspect); err != nil {
		t.Fatalf("buildah inspect: %v", err)
	}
	cfg := inspect.Docker.Config
	if cfg.User != "65532:65532" {
		t.Errorf("the image's user is %q, want 65532:65532", cfg.User)
	}
	if want := []string{"CMD", "/stacks", "healthcheck"}; !slices.Equal(cfg.Healthcheck.Test, want) {
		t.Errorf("the image's health check is %q, want %q (stacks healthcheck reads STACKS_ADDR)", cfg.Healthcheck.Test, want)
	}
	if !slices.Contains(cfg.Env, "TMPDIR=/data") {
		t.Errorf("the image's environment %q has no TMPDIR=/data: the image has no /tmp", cfg.Env)
	}

	ctr := buildah("from", "--quiet", image)
	rootDir := buildah("mount", ctr)
	if fi, err := os.Stat(filepath.Join(rootDir, "etc/ssl/certs/ca-certificates.crt")); err != nil || fi.Size() == 0 {
		t.Errorf("the image has no CA bundle at /etc/ssl/certs/ca-certificates.crt (SMTP over TLS, sslmode=verify-full): %v", err)
	}
	if _, err := os.Stat(filepath.Join(rootDir, "tmp")); err == nil {
		t.Errorf("the image has a /tmp: it would be read-only under docker run --read-only; TMPDIR is /data instead")
	}
	if fi, err := os.Stat(filepath.Join(rootDir, "data")); err != nil {
		t.Errorf("the image has no /data: %v", err)
	} else if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 65532 || st.Gid != 65532 {
		t.Errorf("the image's /data is not owned by 65532:65532 (%v)", fi.Sys())
	}

	// The data volume: a new named volume is a copy of the image's /data.
	data := t.TempDir()
	if err := os.Chown(data, 65532, 65532); err != nil {
		t.Fatal(err)
	}
	// The user comes from the image's USER; the root is bind-mounted read-only on
	// itself in a mount namespace of the container's own, the volume on /data.
	userspec := cfg.User
	// start runs argv in the container; the image's own command is
	// its entrypoint and cmd, its health check the command as it is.
	start := func(env []string, argv ...string) *exec.Cmd {
		script := `set -e
mount --bind "$STACKS_TEST_ROOT" "$STACKS_TEST_ROOT"
mount -o remount,bind,ro "$STACKS_TEST_ROOT"
mount --bind "$STACKS_TEST_DATA" "$STACKS_TEST_ROOT/data"
root=$STACKS_TEST_ROOT user=$STACKS_TEST_USER
unset STACKS_TEST_ROOT STACKS_TEST_DATA STACKS_TEST_USER
exec chroot --userspec="$user" "$root" "$@"`
		cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh"}, argv...)...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "STACKS_TEST_ROOT=" + rootDir, "STACKS_TEST_DATA=" + data, "STACKS_TEST_USER=" + userspec}, env...)
		return cmd
	}
	// withEnv is the image's environment with name set to value ("" unsets it).
	withEnv := func(name, value string) []string {
		var env []string
		for _, kv := range cfg.Env {
			if !strings.HasPrefix(kv, name+"=") {
				env = append(env, kv)
			}
		}
		if value != "" {
			env = append(env, name+"="+value)
		}
		return env
	}

	port, err := stackstest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	env := withEnv("STACKS_ADDR", addr)

	t.Run("NoTMPDIR", func(t *testing.T) {
		noTmp := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
		cmd := start(noTmp, slices.Concat(cfg.Entrypoint, cfg.Cmd)...)
		out, err := runWithin(cmd, 30*time.Second)
		if err == nil || !strings.Contains(out, "TMPDIR") || !strings.Contains(out, "6410") {
			t.Errorf("the image without TMPDIR (no /tmp, root read-only): %v, want a refusal naming TMPDIR and the error SQLite would give (6410)\n%s", err, out)
		}
	})

	var out stackstest.Buffer
	srv := start(env, slices.Concat(cfg.Entrypoint, cfg.Cmd)...)
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = srv.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = srv.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("--- the container's output ---\n%s", out.String())
		}
	})
	if err := stackstest.WaitHealthy("http://"+addr+"/healthz", 90*time.Second, exited); err != nil {
		t.Fatalf("the image (%q %q as %s, root read-only, STACKS_ADDR=%s): %v (%v)", cfg.Entrypoint, cfg.Cmd, userspec, addr, err, waitErr)
	}
	if fi, err := os.Stat(filepath.Join(data, "stacks.db")); err != nil {
		t.Errorf("no stacks.db on the data volume: %v", err)
	} else if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65532 {
		t.Errorf("stacks.db on the data volume is owned by %d, want 65532 (the image's user)", st.Uid)
	}

	// The health check, as the runtime runs it: in the container, with its
	// environment, whose STACKS_ADDR is not the default port.
	if out, err := runWithin(start(env, cfg.Healthcheck.Test[1:]...), 15*time.Second); err != nil || !strings.Contains(out, "healthy") {
		t.Errorf("the image's health check %q with STACKS_ADDR=%s: %v\n%s", cfg.Healthcheck.Test, addr, err, out)
	}
	elsewhere := withEnv("STACKS_ADDR", "127.0.0.1:1")
	if out, err := runWithin(start(elsewhere, cfg.Healthcheck.Test[1:]...), 15*time.Second); err == nil {
		t.Errorf("the health check with STACKS_ADDR=127.0.0.1:1 (nothing there) passed: it does not ask STACKS_ADDR\n%s", out)
	}

	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("the container after SIGTERM: %v, want exit status 0", waitErr)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("the container did not stop within 20 s of SIGTERM")
	}
}

// runWithin runs cmd, killing it after timeout, and returns its output.
func runWithin(cmd *exec.Cmd, timeout time.Duration) (string, error) {
	var out stackstest.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("still running after %v", timeout)
	}
}
