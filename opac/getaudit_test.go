package opac_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stacks-ils/stacks/kit/kittest"
)

// TestEveryGetDecided: every GET of the patrons' router has a row in
// docs/security.md's table "Every GET of the patrons' site", which says whether it
// does heavy work and what guards it; a GET added without a row fails here, and a
// row whose route is gone too.
func TestEveryGetDecided(t *testing.T) {
	listed := map[string]bool{}
	for _, m := range kittest.DocTable(t, "../docs/security.md", "Every GET of the patrons' site", regexp.MustCompile("^\\| `GET ([^`]+)` \\|")) {
		listed[m[1]] = true
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
