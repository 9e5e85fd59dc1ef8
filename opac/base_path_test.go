package opac_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/basepath/basepathtest"
)

// TestBasePath serves the patrons' site under a base path (stacks serve
// --opac-base-path) and at the root, signs a patron in who has loans and a
// hold, and renders every GET route: each URL a page emits is a fragment, an
// external URL, or under the base and answered by the router for its method;
// each Location is under the base; the session cookie's path is base + "/";
// Server-Timing is sent; the permanent link and OAI-PMH's baseURL carry the
// base. Every local link found is then followed: none is 404.
func TestBasePath(t *testing.T) {
	e := newEnv(t)
	e.checkout(t, "P0001", "I00001")
	rec := strconv.FormatInt(e.recordOf(t, "I00002"), 10)
	router := e.OPAC.Router()
	// A hold, placed at a base, so that the account page has its forms.
	placed := false
	for _, base := range []string{"/lib/x", ""} {
		t.Run("Base="+base, func(t *testing.T) {
			ts := httptest.NewServer(basepath.Mount(base, e.OPAC))
			t.Cleanup(ts.Close)
			host := strings.TrimPrefix(ts.URL, "http://")
			site := *e
			site.Srv = ts
			c := site.client()

			r := site.get(t, c, base+"/account/fines")
			if r.Status != http.StatusSeeOther || r.Location != base+"/signin?next=%2Faccount%2Ffines" {
				t.Fatalf("anonymous GET %s/account/fines: %d to %q, want 303 to %s/signin?next=...", base, r.Status, r.Location, base)
			}
			r = site.post(t, c, base+"/signin", url.Values{"card": {"P0001"}, "pin": {"1234"}, "next": {"/account/fines"}})
			if r.Status != http.StatusSeeOther || r.Location != base+"/account/fines" {
				t.Fatalf("POST %s/signin: %d to %q, want 303 to %s/account/fines", base, r.Status, r.Location, base)
			}
			if len(r.Header.Values("Set-Cookie")) == 0 {
				t.Fatal("sign-in set no cookie")
			}
			basepathtest.CheckCookies(t, "POST /signin", r.Header, base)
			if !placed {
				r := site.post(t, c, base+"/records/"+rec+"/hold", url.Values{"pickup": {"CEN"}})
				if r.Status != http.StatusSeeOther {
					t.Fatalf("place a hold under %s: %d\n%s", base, r.Status, r.Body)
				}
				basepathtest.CheckLocation(t, "POST hold", r.Location, base, host)
				placed = true
			}
			for _, next := range []string{"/../admin", "/%2e%2e/x"} {
				r := site.post(t, c, base+"/signin", url.Values{"card": {"P0001"}, "pin": {"1234"}, "next": {next}})
				if r.Location != base+"/account" {
					t.Errorf("sign-in with next=%q: to %q, want %s/account", next, r.Location, base)
				}
			}
			// The hold placed under the first base is on the page.
			if r := site.get(t, c, base+"/account"); !strings.Contains(r.Body, `action="`+base+`/account/holds/`) {
				t.Errorf("GET %s/account: no hold form under the base", base)
			}

			var pages []basepathtest.Route
			for _, rt := range walk(t, router) {
				if rt.method != http.MethodGet {
					continue
				}
				path := fill(rt.pattern, rec)
				if strings.HasPrefix(rt.pattern, "/account/holds/") {
					// The question before cancelling the hold placed above.
					path = fill(rt.pattern, strconv.FormatInt(e.openHold(t, "P0001", rec), 10))
				}
				pages = append(pages, basepathtest.Route{Pattern: rt.pattern, Path: path})
			}
			basepathtest.Pages(t, pages, 12, 15, base, host, router, func(p string) (basepathtest.Answer, string) {
				r := site.get(t, c, p)
				return basepathtest.Answer{Status: r.Status, Header: r.Header, Location: r.Location}, r.Body
			})

			// Absolute URLs carry the base: the permanent link and OAI-PMH.
			want := ts.URL + base + "/records/" + rec
			if r := site.get(t, c, base+"/records/"+rec); !strings.Contains(r.Body, `href="`+want+`"`) {
				t.Errorf("the record page has no permanent link %s", want)
			}
			if r := site.get(t, c, base+"/oai?verb=Identify"); !strings.Contains(r.Body, "<baseURL>"+ts.URL+base+"/oai</baseURL>") {
				t.Errorf("OAI-PMH Identify does not give %s%s/oai as baseURL:\n%s", ts.URL, base, r.Body)
			}
			if base != "" {
				if r := site.get(t, c, "/search"); r.Status != http.StatusNotFound {
					t.Errorf("GET /search outside the base: %d, want 404", r.Status)
				}
			}
			r = site.post(t, c, base+"/signout", url.Values{})
			if r.Status != http.StatusSeeOther || r.Location != base+"/" {
				t.Errorf("POST %s/signout: %d to %q, want 303 to %s/", base, r.Status, r.Location, base)
			}
			basepathtest.CheckCookies(t, "POST /signout", r.Header, base)
		})
	}
}
