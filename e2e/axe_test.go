package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// axeCoreVersion is the axe-core release the accessibility checks run.
// scripts/test-deps.sh reads it from this line and unpacks that release from
// npm into axeCoreDir, so the script and the tests always agree.
const axeCoreVersion = "4.14.1"

// axeTags are the axe-core rule tags checked: every WCAG 2.0, 2.1 and 2.2
// success criterion at levels A and AA that axe can test, color-contrast
// included.
var axeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"}

// axeCoreDir is where scripts/test-deps.sh unpacks axe-core: the npm
// package's package/ directory is inside it.
func axeCoreDir() string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "stacks-test", "axe-core-"+axeCoreVersion)
}

// axeSource is the content of axe.min.js, read once per test binary.
var axeSource = sync.OnceValues(func() (string, error) {
	path := filepath.Join(axeCoreDir(), "package", "axe.min.js")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading axe-core %s: %w; run scripts/test-deps.sh (or `make test`) to install it", axeCoreVersion, err)
	}
	return string(b), nil
})

// newA11yPage opens a page, like newPage, in a context that ignores the app's
// Content-Security-Policy: the policy rightly refuses the injected axe-core
// script. Only the accessibility checks use such a context, so every other
// test still runs under the policy the app sends.
func newA11yPage(t testing.TB, browser playwright.Browser) playwright.Page {
	t.Helper()
	if _, err := axeSource(); err != nil {
		t.Fatal(err)
	}
	page, _ := newPage(t, browser, playwright.BrowserNewContextOptions{BypassCSP: playwright.Bool(true)})
	return page
}

// axeViolation is the part of an axe-core result that a reader of a failure
// needs.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"failureSummary"`
		HTML    string `json:"html"`
	} `json:"nodes"`
}

// axeRun runs axe-core on the whole document with the WCAG A and AA rules and
// returns the violations. axe-core leaves text whose colour is its
// background's ("1:1 contrast") to a person's review, as possibly hidden on
// purpose; no text of this app is, so such text counts as a violation too.
const axeRun = `async (tags) => {
	const r = await axe.run(document, {
		runOnly: {type: "tag", values: tags},
		resultTypes: ["violations"],
	});
	const node = n => ({target: n.target, failureSummary: n.failureSummary || "", html: n.html});
	const out = r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help, nodes: v.nodes.map(node)}));
	for (const v of r.incomplete) {
		if (v.id !== "color-contrast") continue;
		const same = v.nodes.filter(n => n.any.some(c => c.data && c.data.messageKey === "equalRatio"));
		if (same.length > 0) {
			out.push({id: "color-contrast", impact: "serious", help: "Text must not be the colour of its background (1:1 contrast, invisible)",
				nodes: same.map(n => ({...node(n), failureSummary: "Element has a 1:1 contrast ratio with the background"}))});
		}
	}
	return out;
}`

// checkA11y injects axe-core into the page as it is now and fails the test
// (without stopping it) for every WCAG 2 A or AA violation, naming the state
// of the page (like "Check out: fines confirmation"), the rule, its impact,
// the elements and what is wrong with each. The page must come from
// newA11yPage.
func checkA11y(t testing.TB, page playwright.Page, state string) {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		t.Fatal(err)
	}
	// Loading may take longer than an assertion while make test runs every
	// package at once on two CPUs.
	must(t, waitLoaded(page, 3*uiTimeout), "%s: waiting for the page to load", state)
	loaded, err := page.Evaluate(`() => typeof window.axe !== "undefined"`)
	must(t, err, "%s: looking for axe-core on the page", state)
	if loaded != true {
		_, err := page.AddScriptTag(playwright.PageAddScriptTagOptions{Content: playwright.String(src)})
		must(t, err, "%s: injecting axe-core into %s (is the context from newA11yPage, with BypassCSP?)", state, page.URL())
	}
	raw, err := page.Evaluate(axeRun, axeTags)
	must(t, err, "%s: running axe-core on %s", state, page.URL())
	var vs []axeViolation
	if err := remarshal(raw, &vs); err != nil {
		t.Fatalf("%s: reading axe-core's results: %v", state, err)
	}
	if len(vs) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %d accessibility violation(s)", state, page.URL(), len(vs))
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s [%s]: %s", v.ID, v.Impact, v.Help)
		for _, n := range v.Nodes {
			sel := make([]string, len(n.Target))
			for i, s := range n.Target {
				sel[i] = fmt.Sprint(s)
			}
			fmt.Fprintf(&b, "\n    - %s\n      %s\n      %s", strings.Join(sel, " >> "), truncate(n.HTML, 200),
				strings.ReplaceAll(n.Summary, "\n", "\n      "))
		}
	}
	t.Error(b.String())
}

// waitLoaded waits up to timeout (ms) until the page's document has loaded:
// document.readyState is "complete", as it is when the load event fires (the
// stylesheets, scripts and images are in). If a navigation replaces the
// document meanwhile, the new one is asked. The page must bypass the
// Content-Security-Policy (newA11yPage): Playwright's polling evaluates the
// condition with eval, which the app's policy refuses.
//
// Not page.WaitForLoadState, whose wait can miss the event it waits for:
// playwright-go v0.5200.1 (frame.go, waitForLoadStateImpl) first looks in its
// record of the frame's load states and only then starts listening for the
// next one, while another goroutine dispatches the driver's events. A "load"
// dispatched between the two is recorded but heard by no one, and the wait runs
// to its timeout with the page long loaded: TestAccessibility/Admin and
// TestReportsAccessibility failed so under make test's load ("waiting for the
// page to load: Timeout 30000ms exceeded", the page complete on the screen),
// each time right after a click that navigated, the one case where the wait
// starts while the page is still loading. Here the browser checks the document
// itself: nothing to miss.
func waitLoaded(page playwright.Page, timeout float64) error {
	_, err := page.WaitForFunction(`() => document.readyState === "complete"`, nil,
		playwright.PageWaitForFunctionOptions{Timeout: playwright.Float(timeout), Polling: playwright.Float(50)})
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// remarshal converts what page.Evaluate returns (maps and slices) into a typed
// value through JSON.
func remarshal(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}
