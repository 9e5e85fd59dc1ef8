// Package stackstest is for tests that build and run the stacks binary (the
// browser tests, the hardening tests): Build builds it the one way it is built
// (scripts/build.sh), and RecordSources makes Go's test cache see what it is
// built from.
//
// go test reuses a package's earlier result when the test binary, the files the
// test opened and the environment variables it read are unchanged. A test that
// builds ./cmd/stacks with `go build` in a child process opens none of the
// binary's sources itself, so a change to, say, a web page would not make it run
// again. RecordSources opens each of them, so go test sees them. go test
// records only what the tests open while they run, not what TestMain does before
// m.Run: Record calls it once per test process from inside a test.
package stackstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Root returns the module's directory (go env GOMOD's).
func Root() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("go env GOMOD: not inside a module")
	}
	return filepath.Dir(gomod), nil
}

// ModuleRoot is Root for a test: it fails tb if there is no module.
func ModuleRoot(tb testing.TB) string {
	tb.Helper()
	root, err := Root()
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// Build builds the stacks binary into dir/stacks with scripts/build.sh, the
// command make build and the container image use (static, trimmed, the release
// stamped in), and returns the binary's path and the module's directory, which
// Record needs. It may run in TestMain.
func Build(dir string) (bin, root string, err error) {
	if root, err = Root(); err != nil {
		return "", "", err
	}
	bin = filepath.Join(dir, "stacks")
	cmd := exec.Command("sh", filepath.Join(root, "scripts", "build.sh"), bin)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("scripts/build.sh %s: %w\n%s", bin, err, out)
	}
	return bin, root, nil
}

// RecordSources opens every file of this module that ./cmd/stacks is built from
// (the Go files and the embedded files of each package it links, go.mod and
// go.sum, and scripts/build.sh and the VERSION it stamps in), so that go test
// runs the calling test package again when one of them changes. root is the
// module's directory.
func RecordSources(root string) error {
	cmd := exec.Command("go", "list", "-deps", "-json=Dir,Module,GoFiles,CgoFiles,EmbedFiles", "./cmd/stacks")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list -deps ./cmd/stacks: %w", err)
	}
	files := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum"),
		filepath.Join(root, "scripts", "build.sh"), filepath.Join(root, "VERSION")}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			Dir    string
			Module *struct{ Main bool }
			// The package's files, relative to Dir.
			GoFiles, CgoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); err != nil {
			return fmt.Errorf("go list -deps ./cmd/stacks: %w", err)
		}
		// Other modules are fixed by go.sum; the standard library by the Go
		// version, which is part of the test binary.
		if p.Module == nil || !p.Module.Main {
			continue
		}
		for _, list := range [][]string{p.GoFiles, p.CgoFiles, p.EmbedFiles} {
			for _, f := range list {
				files = append(files, filepath.Join(p.Dir, f))
			}
		}
	}
	if len(files) < 50 {
		return fmt.Errorf("go list -deps ./cmd/stacks: only %d files of this module", len(files))
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		fh.Close()
	}
	return nil
}

var recorded struct {
	once sync.Once
	err  error
}

// Record calls RecordSources once per test process and fails tb if it failed. Call
// it from each test that runs the binary (through the harness's helpers), not from
// TestMain.
func Record(tb testing.TB, root string) {
	tb.Helper()
	recorded.once.Do(func() { recorded.err = RecordSources(root) })
	if recorded.err != nil {
		tb.Fatal(recorded.err)
	}
}
