package opac_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// hostileValues are what an attacker or a broken client sends in a field.
var hostileValues = []string{
	"", " ", "'", `"><script>alert(1)</script>`, "\x00", "\xff\xfe", "%", "../../etc/passwd", "-1", "0", "1e309",
	"99999999999999999999999", strings.Repeat("x", 5000), "title:", "*", "a* b* c* d* e*", "NOT AND OR", "\u202e", "2026-02-30",
}

// hostileFields are every field and query parameter the patrons' site reads.
var hostileFields = []string{"q", "in", "sort", "type", "branch", "available", "page", "next", "card", "pin", "loan", "all",
	"until", "pickup", "current", "new", "confirm", "verb", "identifier", "metadataPrefix", "from", "set", "resumptionToken"}

// TestHostileInput sends hostile values in every field to every route, as a
// visitor and signed in: no answer is a 500, shows a stack trace or carries the
// value unescaped into a page.
func TestHostileInput(t *testing.T) {
	e := newEnv(t)
	patron := e.client()
	e.signIn(t, patron, "P0001")
	routes := walk(t, e.OPAC.Router())
	for _, who := range []struct {
		name string
		c    *http.Client
	}{{"Visitor", e.client()}, {"Patron", patron}} {
		for _, rt := range routes {
			if rt.method != http.MethodGet && rt.method != http.MethodPost {
				continue
			}
			for _, v := range hostileValues {
				form := url.Values{}
				for _, f := range hostileFields {
					form.Set(f, v)
				}
				form.Set("verb", "ListRecords") // one valid verb, so that the OAI arguments are read too
				for _, id := range []string{"1", url.PathEscape(v)} {
					path := fill(rt.pattern, id)
					if path == "/signout" {
						continue // it would end the session the other requests use
					}
					var r response
					if rt.method == http.MethodGet {
						r = e.get(t, who.c, path+"?"+form.Encode())
					} else {
						r = e.post(t, who.c, path, form)
					}
					if r.Status >= 500 || strings.Contains(r.Body, "goroutine") || strings.Contains(r.Body, "panic") {
						t.Errorf("%s %s %s with %q: %d\n%.300s", who.name, rt.method, path, v, r.Status, r.Body)
					}
					if strings.Contains(r.Body, "<script>alert(1)") {
						t.Errorf("%s %s %s: the value came back unescaped", who.name, rt.method, path)
					}
				}
			}
		}
		if r := e.get(t, who.c, "/account"); who.name == "Patron" && r.Status != http.StatusOK {
			t.Errorf("the patron was signed out by hostile input: %d", r.Status)
		}
	}
}

// TestNULRefused: a NUL byte in a field of the pages is refused with a 400 that
// says so, before it reaches the database (PostgreSQL refuses it in text), on
// both engines; the patron stays signed in.
func TestNULRefused(t *testing.T) {
	e := newEnv(t)
	patron := e.client()
	e.signIn(t, patron, "P0001")
	for _, tc := range []struct {
		name string
		send func() response
	}{
		{"SignInCard", func() response {
			return e.post(t, e.client(), "/signin", url.Values{"card": {"P0001\x00"}, "pin": {"1234"}})
		}},
		{"SignInPIN", func() response {
			return e.post(t, e.client(), "/signin", url.Values{"card": {"P0001"}, "pin": {"12\x0034"}})
		}},
		{"Search", func() response { return e.get(t, e.client(), "/search?q=river%00") }},
		{"FieldName", func() response { return e.get(t, e.client(), "/search?q%00=river") }},
		{"PINChange", func() response {
			return e.post(t, patron, "/account/pin", url.Values{"current": {"1234"}, "new": {"5678\x00"}, "confirm": {"5678\x00"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.send()
			if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "NUL character") {
				t.Errorf("%d\n%.300s", r.Status, r.Body)
			}
		})
	}
	if r := e.get(t, patron, "/account"); r.Status != http.StatusOK {
		t.Errorf("the patron was signed out: %d", r.Status)
	}
}
