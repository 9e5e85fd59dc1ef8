package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestConsortiumRecipeChecked: docs/deploy.md's consortium section ("A
// consortium: several servers on PostgreSQL") is what
// scripts/pg-standby-check.sh runs. The script needs PostgreSQL's server
// binaries, lighttpd and a minute or more, so make test does not run it; this
// test keeps the two in step: the balancer's configuration line for line (hosts
// and ports aside), and the commands and flags the recipe depends on.
func TestConsortiumRecipeChecked(t *testing.T) {
	read := func(parts ...string) string {
		b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	doc := read("docs", "deploy.md")
	script := read("scripts", "pg-standby-check.sh")
	i := strings.Index(doc, "## 5. A consortium: several servers on PostgreSQL")
	if i < 0 {
		t.Fatal(`docs/deploy.md has no section "5. A consortium: several servers on PostgreSQL"`)
	}
	section := doc[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}

	// The balancer: every line of the page's lighttpd block is in the
	// configuration the script runs.
	hostPort := regexp.MustCompile(`"host" => "[^"]*", "port" => [^ )]*`)
	norm := func(s string) string {
		return hostPort.ReplaceAllString(strings.TrimSpace(s), `"host" => H, "port" => P`)
	}
	block := codeBlockWith(section, "proxy.server")
	if block == "" {
		t.Fatal("the consortium section has no lighttpd block with proxy.server")
	}
	conf := script[strings.Index(script, `cat >"$tmp/lighttpd.conf"`):]
	conf = conf[:strings.Index(conf, "\nEOF")]
	have := map[string]bool{}
	for _, l := range strings.Split(conf, "\n") {
		have[norm(l)] = true
	}
	for _, l := range strings.Split(block, "\n") {
		if l = norm(l); l != "" && !have[l] {
			t.Errorf("docs/deploy.md's balancer line %q is not in the configuration scripts/pg-standby-check.sh runs", l)
		}
	}

	// The commands and flags the recipe stands on, in both.
	for _, s := range []string{
		"pg_create_physical_replication_slot('standby1')",
		"pg_basebackup",
		"-R -X stream -S standby1 -c fast",
		"standby.signal",
		"primary_conninfo",
		"pg_is_in_recovery()",
		"pg_stat_replication",
		"pg_replication_slots",
		"read-only transaction",
		"promote",
		"target_session_attrs=read-write",
		"stacks migrate",
		"stacks backup",
		"pg_restore --list",
	} {
		if !strings.Contains(section, s) {
			t.Errorf("docs/deploy.md's consortium section does not say %q", s)
		}
		if !strings.Contains(script, s) && !strings.Contains(script, strings.Replace(s, "stacks ", `"$stacks" `, 1)) {
			t.Errorf("scripts/pg-standby-check.sh does not run %q", s)
		}
	}
}

// codeBlockWith returns the first fenced code block of md that contains s.
func codeBlockWith(md, s string) string {
	parts := strings.Split(md, "```")
	for i := 1; i < len(parts); i += 2 {
		if strings.Contains(parts[i], s) {
			// Drop the info string (the rest of the opening fence's line).
			_, body, _ := strings.Cut(parts[i], "\n")
			return body
		}
	}
	return ""
}
