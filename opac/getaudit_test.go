package opac_test

import (
	"bufio"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEveryGetDecided: every GET of the patrons' router has a row in
// docs/security.md's table "Every GET of the patrons' site", which says whether it
// does heavy work and what guards it; a GET added without a row fails here, and a
// row whose route is gone too.
func TestEveryGetDecided(t *testing.T) {
	f, err := os.Open("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `GET ([^`]+)` \\|")
	listed := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			in = strings.Contains(line, "Every GET of the patrons' site")
		case in:
			if m := row.FindStringSubmatch(line); m != nil {
				listed[m[1]] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	have := map[string]bool{}
	for _, rt := range walk(t, e.OPAC.Router()) {
		if rt.method != http.MethodGet {
			continue
		}
		have[rt.pattern] = true
		if !listed[rt.pattern] {
			t.Errorf("GET %s: not in docs/security.md's table of the patrons' GETs: decide whether it does heavy work", rt.pattern)
		}
	}
	for p := range listed {
		if !have[p] {
			t.Errorf("docs/security.md lists GET %s, which the patrons' router does not have", p)
		}
	}
	if len(have) < 10 {
		t.Fatalf("only %d GET routes walked", len(have))
	}
}
