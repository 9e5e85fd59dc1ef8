package e2e

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestDeskSessionDocInStep checks that the repository's copy of the desk scenario
// (docs/desk-session.md, which a clone has) says what the shared contract beside
// the repository (../shared/desk-session.md, which the team's outside clients
// read) says. Where there is no ../shared (a clone on its own), the copy is the
// contract, and there is nothing to compare it with.
func TestDeskSessionDocInStep(t *testing.T) {
	t.Parallel()
	ours, err := os.ReadFile(filepath.Join("..", "docs", "desk-session.md"))
	if err != nil {
		t.Fatalf("the repository's desk scenario: %v", err)
	}
	shared, err := os.ReadFile(filepath.Join("..", "..", "shared", "desk-session.md"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Log("no ../shared/desk-session.md beside this repository: docs/desk-session.md is the contract")
		return
	} else if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, shared) {
		t.Error("docs/desk-session.md and ../shared/desk-session.md differ: keep the two in step (copy the changed one over the other)")
	}
}
