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

// TestSecretsNotInUsage: passwords given by environment variables are read after
// the flags are parsed, never used as a flag's default: --help and a usage error
// print the defaults, to a terminal or a log anyone may read.
func TestSecretsNotInUsage(t *testing.T) {
	secrets := map[string]string{
		"STACKS_SMTP_PASSWORD": "smtp-s3cret-value",
		"STACKS_SIP_PASSWORD":  "sip-s3cret-value",
		"STACKS_PASSWORD":      "admin-s3cret-value",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	for _, c := range commands() {
		prefix := []string{c.name}
		switch c.name {
		case "user", "sip-account":
			prefix = append(prefix, "add")
		case "notices":
			prefix = append(prefix, "run")
		}
		for _, last := range []string{"--help", "--no-such-flag"} {
			var out bytes.Buffer
			err := run(context.Background(), append(append([]string{}, prefix...), last), &out, &out)
			text := out.String()
			if err != nil {
				text += err.Error()
			}
			for k, v := range secrets {
				if strings.Contains(text, v) {
					t.Errorf("%s %s prints %s:\n%s", strings.Join(prefix, " "), last, k, text)
				}
			}
		}
	}

	// The variable still gives the password.
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	f := registerSMTPFlags(fs)
	if err := fs.Parse([]string{"--smtp-host", "mail.example.org", "--smtp-from", "x@example.org", "--smtp-user", "stacks"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config()
	if err != nil || cfg.Password != secrets["STACKS_SMTP_PASSWORD"] {
		t.Fatalf("config from the environment: %v, password %q", err, cfg.Password)
	}
}
