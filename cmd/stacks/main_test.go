package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestHelp: stacks --help and every subcommand's --help explain themselves and
// succeed; unknown commands and flags are usage errors.
func TestHelp(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, &out, &out); err != nil || !strings.Contains(out.String(), "Commands:") {
		t.Fatalf("stacks --help: %v\n%s", err, out.String())
	}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			args := []string{c.name, "--help"}
			if c.name == "user" || c.name == "sip-account" {
				args = []string{c.name, "add", "--help"}
			}
			err := run(context.Background(), args, &out, &out)
			if err != nil && !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("%v: %v", args, err)
			}
			if exitCode(err) != 0 && err != nil {
				t.Errorf("%v exits %d, want 0", args, exitCode(err))
			}
			if !strings.Contains(out.String(), "Usage: stacks "+c.name) {
				t.Errorf("%v printed no usage:\n%s", args, out.String())
			}
		})
	}
	if err := run(context.Background(), []string{"bogus"}, &out, &out); exitCode(err) != 2 {
		t.Errorf("unknown command: exit %d, want 2", exitCode(err))
	}
	if err := run(context.Background(), []string{"serve", "--no-such-flag"}, &out, &out); exitCode(err) != 2 {
		t.Errorf("unknown flag: exit %d, want 2", exitCode(err))
	}
}
