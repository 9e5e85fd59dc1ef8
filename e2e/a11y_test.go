package e2e

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/db"
)

// TestAccessibility visits every staff page in its main states, on a fresh demo
// library, signed in as circulation staff and as an administrator, and checks
// each with axe-core against WCAG 2 A and AA (checkA11y): no violations
// allowed. A failed check does not stop the walk, so one run lists them all.
func TestAccessibility(t *testing.T) {
	t.Parallel()
	if _, err := axeSource(); err != nil {
		t.Fatal(err)
	}
	browser := launchBrowser(t)

	// The three walks run side by side, each on a server and demo library of
	// its own: the desk's walk changes its library (loans, a hold, a message
	// for the desk), and the others must not depend on when it does.
	t.Run("SignedOut", func(t *testing.T) {
		t.Parallel()
		srv := startServer(t)
		page := newA11yPage(t, browser)
		a := &a11yWalk{t: t, srv: srv, page: page}
		a.open("/login")
		a.check("Login")
		login(t, page, "desk", "not-the-password")
		must(t, expect.Locator(page.GetByText("not right")).ToBeVisible(), "the wrong password's message")
		a.check("Login: wrong password")
	})

	t.Run("Desk", func(t *testing.T) {
		t.Parallel()
		srv := startServer(t)
		fx := a11yFixtures(t, srv)
		page := newA11yPage(t, browser)
		a := &a11yWalk{t: t, srv: srv, page: page}
		a.open("/login")
		login(t, page, "desk", "desk")
		must(t, expect.Locator(button(page, "Log out")).ToBeVisible(), "signed in")
		a.check("Start page")
		checkFocusRings(t, page, "Start page", 12)

		// Check out.
		a.nav("Check out")
		must(t, expect.Locator(a.field("Card number")).ToBeFocused(), "the Card number field has focus")
		a.check("Check out: no patron")
		a.scan("Card number", "P0001")
		must(t, expect.Locator(a.field("Barcode")).ToBeVisible(), "P0001's visit")
		a.scan("Barcode", "I00001")
		must(t, expect.Locator(page.Locator(`table.visit-list tbody tr[data-outcome="done"]`)).ToHaveCount(1), "I00001 checked out")
		a.scan("Barcode", "I00003")
		must(t, expect.Locator(page.Locator(`table.visit-list tbody tr[data-outcome="done"]`)).ToHaveCount(2), "I00003 checked out")
		a.check("Check out: P0001 with loans")
		checkFocusRings(t, page, "Check out: P0001 with loans", 16)
		a.scan("Barcode", "NOSUCHITEM")
		must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Not checked out: NOSUCHITEM"})).ToBeVisible(), "the unknown barcode's refusal")
		a.check("Check out: unknown barcode")
		must(t, a.link("Due-date slip").Click(), "opening the due-date slip")
		a.check("Check out: due-date slip")
		a.nav("Check out")
		a.click("Finish with this patron")

		a.scan("Card number", "P0002")
		must(t, expect.Locator(a.field("Barcode")).ToBeVisible(), "P0002's visit")
		a.scan("Barcode", "I00006")
		must(t, expect.Locator(button(page, "Confirm checkout")).ToBeVisible(), "the fines confirmation")
		a.check("Check out: P0002's fines confirmation")
		a.scan("Barcode", "I00008")
		must(t, expect.Locator(page.GetByText("Waiting for your decision on I00006")).ToBeVisible(), "a scan waiting for the decision")
		a.check("Check out: a scan waiting for a decision")
		a.click("Cancel")
		must(t, expect.Locator(page.Locator(`tr[data-scan="I00008"]`)).ToHaveAttribute("data-outcome", "decision"), "the waiting scan asks in turn")
		a.click("Cancel")
		a.click("Finish with this patron")

		a.scan("Card number", "P0004")
		must(t, expect.Locator(a.field("Barcode")).ToBeVisible(), "P0004's visit")
		a.scan("Barcode", "I00007")
		must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Not checked out: I00007"})).ToBeVisible(), "the refusal")
		must(t, expect.Locator(button(page, "Renew card")).ToBeVisible(), "the refusal's way out")
		a.check("Check out: P0004's refusal (expired card)")
		a.click("Finish with this patron")

		a.scan("Card number", "P0005")
		must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Message for the desk"})).ToBeVisible(), "P0005's message for the desk")
		a.check("Check out: a message for the desk")
		a.scan("Barcode", "P0001")
		must(t, expect.Locator(page.Locator("#desk-patron")).ToContainText("Alex Reader"), "a patron card in the Barcode field opens that patron")
		a.check("Check out: another patron's card")
		a.click("Finish with this patron")

		a.scan("Card number", fx.surname)
		must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleButton, playwright.PageGetByRoleOptions{Name: "Choose "}).First()).ToBeVisible(), "patrons matching %q", fx.surname)
		a.check("Check out: patrons matching a name")

		// A hold for P0003 on I00003, which P0001 has, so that its checkin finds it.
		a.nav("Search")
		a.check("Search: empty")
		a.scan("Search", "left hand of darkness")
		title := a.link("The Left Hand of Darkness")
		must(t, expect.Locator(title).ToBeVisible(), "a result titled The Left Hand of Darkness")
		a.check("Search: results")
		must(t, title.Click(), "opening the record")
		must(t, expect.Locator(page.Locator("table.items")).ToBeVisible(), "the record's items")
		a.check("Record page")
		must(t, a.link("Place hold").Click(), "clicking Place hold")
		must(t, expect.Locator(a.field("Pickup branch")).ToBeVisible(), "the place-hold form")
		a.check("Place hold form")
		a.scan("Card number", "P9999")
		must(t, expect.Locator(page.Locator(".field-error").First()).ToBeVisible(), "the unknown card's message")
		a.check("Place hold form: unknown card")

		a.nav("Search")
		a.scan("Search", "I00003")
		// A barcode goes straight to its record.
		must(t, expect.Locator(page.Locator("table.items")).ToContainText("I00003"), "I00003's record")
		must(t, a.link("Place hold").Click(), "clicking Place hold on I00003's record")
		must(t, a.field("Card number").Fill("P0003"), "typing P0003")
		_, err := a.field("Pickup branch").SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Central"}})
		must(t, err, "choosing Central")
		a.click("Place hold")
		must(t, expect.Locator(page.GetByText("Hold placed")).ToBeVisible(), "Hold placed")
		a.check("Record page: hold placed")

		a.nav("Search")
		a.scan("Search", "zzqx nothing matches this")
		must(t, expect.Locator(page.GetByText("0 results")).ToBeVisible(), "no results")
		a.check("Search: no results")

		// Check in.
		a.nav("Check in")
		must(t, expect.Page(page).ToHaveURL(onCheckinPage), "on the Check in page")
		a.check("Check in: empty")
		a.scan("Barcode", "I00001")
		must(t, expect.Locator(page.Locator("table.checkin-list")).ToContainText("Returned from Alex Reader"), "I00001 returned")
		a.check("Check in: a returned item")
		a.scan("Barcode", "I00003")
		must(t, expect.Locator(page.Locator("section.hold-found")).ToContainText("Casey Waiting"), "Hold found for P0003")
		a.check("Check in: Hold found")
		a.scan("Barcode", fx.transfer)
		must(t, expect.Locator(page.Locator("table.checkin-list tbody tr").First()).ToContainText("Transfer to"), "%s to transfer", fx.transfer)
		a.check("Check in: transfer")
		must(t, expect.Locator(page.Locator("section.banner-transfer")).ToContainText("Transfer to"), "the transfer's banner")
		must(t, page.Locator("section.banner-transfer").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Print transit slip"}).Click(), "opening the transit slip")
		a.check("Transit slip")
		a.nav("Transfers")
		must(t, expect.Locator(page.Locator("main")).ToContainText(fx.transfer), "the transfer listed")
		a.check("Transfers")
		a.nav("Check in")
		a.scan("Barcode", "NOSUCHITEM")
		must(t, expect.Locator(page.Locator(`tr[data-scan="NOSUCHITEM"]`)).ToHaveAttribute("data-outcome", "refused"), "the unknown barcode's row")
		a.check("Check in: unknown barcode")
		a.scan("Barcode", "P0003")
		must(t, expect.Locator(button(page, "Check out to Casey Waiting")).ToBeVisible(), "a patron card at Check in")
		a.check("Check in: a patron card")
		must(t, a.link("Checkin receipt").Click(), "opening the checkin receipt")
		a.check("Check in: receipt")

		// Patrons.
		a.nav("Patrons")
		a.check("Patrons: search")
		a.scan("Search patrons", "Reader")
		patron := a.link("Reader, Alex")
		must(t, expect.Locator(patron).ToBeVisible(), "Alex Reader in the results")
		a.check("Patrons: results")
		a.scan("Search patrons", "zzqx")
		must(t, expect.Locator(page.GetByText("No patron matches")).ToBeVisible(), "no patron")
		a.check("Patrons: no results")
		a.scan("Search patrons", "Reader")
		must(t, a.link("Reader, Alex").Click(), "opening Alex Reader")
		must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Alex Reader", Level: playwright.Int(1)})).ToBeVisible(), "Alex Reader's page")
		a.check("Patron page: P0001")
		must(t, a.link("Edit").Click(), "clicking Edit")
		must(t, expect.Locator(button(page, "Save changes")).ToBeVisible(), "the edit form")
		a.check("Patron edit form")
		for _, card := range []string{"P0002", "P0004", "P0005"} {
			a.nav("Patrons")
			a.scan("Search patrons", card)
			must(t, expect.Page(page).ToHaveURL(onPatronPage), "%s's page", card)
			a.check("Patron page: " + card)
		}
		a.nav("Patrons")
		must(t, a.link("New patron").Click(), "clicking New patron")
		a.check("New patron form")

		// Holds, the hold slip, My account, a page that does not exist.
		a.nav("Holds")
		a.check("Holds")
		must(t, page.Locator("header").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Workstation"}).Click(), "clicking Workstation")
		must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Workstation", Level: playwright.Int(1)})).ToBeVisible(), "the Workstation page")
		a.check("Workstation settings")
		a.open("/")
		must(t, page.Locator("header").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Morgan Desk"}).Click(), "clicking the staff user's name")
		must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Level: playwright.Int(1)})).ToBeVisible(), "My account")
		a.check("My account")
		a.open("/no-such-page")
		a.check("404 page")
	})

	t.Run("Admin", func(t *testing.T) {
		t.Parallel()
		srv := startServer(t)
		page := newA11yPage(t, browser)
		a := &a11yWalk{t: t, srv: srv, page: page}
		a.open("/login")
		login(t, page, "admin", "admin")
		must(t, expect.Locator(button(page, "Log out")).ToBeVisible(), "signed in")
		a.check("Start page (administrator)")
		a.nav("Administration")
		a.check("Administration")
		for _, name := range []string{"Circulation rules", "Calendar", "Import MARC records", "Branches and types", "Staff accounts", "SIP accounts", "Preferences"} {
			a.nav("Administration")
			must(t, page.Locator("main").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: name, Exact: playwright.Bool(true)}).Click(), "opening %s", name)
			a.check("Administration: " + name)
		}
		a.nav("Administration")
		must(t, a.link("Circulation rules").Click(), "opening Circulation rules")
		must(t, a.link("New rule").Click(), "clicking New rule")
		a.check("Administration: new rule")
		a.click("Save rule")
		a.check("Administration: new rule, refused")
		a.nav("Administration")
		must(t, a.link("Circulation rules").Click(), "opening Circulation rules")
		must(t, page.Locator("main table a").First().Click(), "editing a rule")
		a.check("Administration: edit rule")
		a.nav("Administration")
		must(t, a.link("SIP accounts").Click(), "opening SIP accounts")
		must(t, a.link("kiosk").Click(), "opening the kiosk account")
		a.check("Administration: SIP account")

		// Notices: the queue, a message, the templates, one template's editor
		// with its preview, the settings, and a branch's print batch.
		a.nav("Administration")
		must(t, a.link("Notices").Click(), "opening Notices")
		a.check("Administration: notices")
		must(t, page.Locator("main table tbody a[href^='/admin/notices/']").First().Click(), "opening a notice")
		a.check("Administration: a notice")
		must(t, a.link("Templates").Click(), "opening the notice templates")
		a.check("Administration: notice templates")
		must(t, a.link("Due soon").Click(), "opening a notice template")
		a.click("Preview")
		a.check("Administration: notice template, previewed")
		must(t, a.link("Settings").Click(), "opening the notice settings")
		a.check("Administration: notice settings")
		must(t, a.link("Queue").Click(), "back to the queue")
		must(t, a.link("Central").Click(), "opening Central's print batch")
		a.check("Notices to print")

		// Cataloguing, open to all staff.
		a.nav("Search")
		a.scan("Search", "left hand of darkness")
		must(t, a.link("The Left Hand of Darkness").Click(), "opening the record")
		must(t, a.link("Edit record").Click(), "clicking Edit record")
		a.check("Record edit form")
		_, _ = a.page.GoBack()
		must(t, a.link("Add item").Click(), "clicking Add item")
		a.check("Add item form")
		_, _ = a.page.GoBack()
		must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Edit item I00010"}).Click(), "editing I00010")
		a.check("Item edit form")
		a.nav("Search")
		must(t, a.link("Add a record").Click(), "clicking Add a record")
		a.check("New record form")
	})
}

// onPatronPage matches a patron page's URL.
var onPatronPage = regexp.MustCompile(`/patrons/\d+$`)

// a11yWalk is a staff member going from page to page and checking each.
type a11yWalk struct {
	t    *testing.T
	srv  *server
	page playwright.Page
}

func (a *a11yWalk) check(state string) {
	a.t.Helper()
	checkA11y(a.t, a.page, state)
}

func (a *a11yWalk) open(path string) {
	a.t.Helper()
	_, err := a.page.Goto(a.srv.BaseURL + path)
	must(a.t, err, "opening %s", path)
}

func (a *a11yWalk) nav(name string) {
	a.t.Helper()
	must(a.t, navLink(a.page, name).Click(), "clicking %q in the navigation", name)
	must(a.t, expect.Locator(navLink(a.page, name)).ToHaveAttribute("aria-current", "page"), "on the %s page", name)
	// The page's deferred scripts run before it is complete: a scan typed
	// before then would be a plain form post, not the desk script's queue.
	must(a.t, waitLoaded(a.page, uiTimeout), "loading the %s page", name)
}

func (a *a11yWalk) field(label string) playwright.Locator {
	return a.page.GetByLabel(label, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
}

func (a *a11yWalk) link(name string) playwright.Locator {
	return a.page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
}

func (a *a11yWalk) click(name string) {
	a.t.Helper()
	must(a.t, button(a.page, name).Click(), "clicking %q", name)
}

// scan types into a field and presses Enter, as a scanner does.
func (a *a11yWalk) scan(label, value string) {
	a.t.Helper()
	f := a.field(label)
	must(a.t, f.Fill(value), "typing %q into %q", value, label)
	must(a.t, f.Press("Enter"), "pressing Enter in %q", label)
	must(a.t, waitLoaded(a.page, uiTimeout), "loading the page after %q", label)
}

// a11yData are things of the server's demo library that the walk needs
// beyond the fixtures of shared/desk-session.md.
type a11yData struct {
	// transfer is an available item whose home is Eastside or Westside and
	// whose record has no hold to fill: checked in at Central, it goes home.
	transfer string
	// surname is shared by several patrons, so that Check out lists them.
	surname string
}

func a11yFixtures(t *testing.T, srv *server) a11yData {
	t.Helper()
	d, err := db.Open(srv.DB, db.Options{ReadConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var fx a11yData
	err = d.Read(context.Background(), func(tx *db.Tx) error {
		err := tx.QueryRow(`
			SELECT i.barcode FROM items i JOIN branches b ON b.id = i.home_branch_id
			WHERE b.code IN ('EAS', 'WES') AND i.status = 'available'
			  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status = 'queued')
			ORDER BY i.barcode LIMIT 1`).Scan(&fx.transfer)
		if err != nil {
			return fmt.Errorf("an Eastside or Westside item: %w", err)
		}
		err = tx.QueryRow(`
			SELECT surname FROM patrons GROUP BY surname
			HAVING count(*) BETWEEN 2 AND 10 ORDER BY surname LIMIT 1`).Scan(&fx.surname)
		if err != nil {
			return fmt.Errorf("a surname several patrons share: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the demo library: %v", err)
	}
	err = d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE patrons SET desk_message = 'Ask for the new address.' WHERE card = 'P0005'`)
		return err
	})
	if err != nil {
		t.Fatalf("a message for the desk: %v", err)
	}
	return fx
}

// focusRings tabs through the page's first tabs controls and, for each, reads
// the focus outline and the colours just outside it (what the ring is seen
// against: the header's blue for the header's controls, white or grey
// elsewhere). WCAG 2.4.7 and 1.4.11 want a visible indicator with at least
// 3:1 contrast against what is adjacent; axe-core does not check this.
const focusRings = `() => {
	const el = document.activeElement;
	if (!el || el === document.body) return null;
	const lum = c => {
		const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
		return 0.2126 * r + 0.7152 * g + 0.0722 * b;
	};
	const parse = s => (s.match(/[\d.]+/g) || []).map(Number).concat([1]).slice(0, 4);
	const background = e => {
		for (; e; e = e.parentElement) {
			const c = parse(getComputedStyle(e).backgroundColor);
			if (c[3] > 0.5) return c;
		}
		return [255, 255, 255, 1];
	};
	const st = getComputedStyle(el);
	const width = parseFloat(st.outlineWidth) || 0;
	const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + " " + JSON.stringify((el.innerText || el.value || el.getAttribute("aria-label") || "").trim().slice(0, 40));
	if (st.outlineStyle === "none" || width < 2) return {name, problem: "no focus outline (" + st.outlineStyle + " " + st.outlineWidth + ")"};
	const ring = parse(st.outlineColor);
	// A ring drawn inside the element (a negative offset, with a gap to the
	// edge) is seen against the element's own background.
	const r = el.getBoundingClientRect(), out = (parseFloat(st.outlineOffset) || 0) + width + 2;
	const points = out <= 1 ? [[null, null]] :
		[[r.left - out, r.top + r.height / 2], [r.right + out, r.top + r.height / 2], [r.left + r.width / 2, r.top - out], [r.left + r.width / 2, r.bottom + out]];
	let worst = Infinity, against = "";
	for (const [x, y] of points) {
		if (x !== null && (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight)) continue;
		const behind = x === null ? el : document.elementsFromPoint(x, y).find(e => e !== el && !el.contains(e));
		const bg = background(behind);
		const [hi, lo] = [lum(ring), lum(bg)].sort((a, b) => b - a);
		const ratio = (hi + 0.05) / (lo + 0.05);
		if (ratio < worst) { worst = ratio; against = "rgb(" + bg.slice(0, 3).join(",") + ")"; }
	}
	if (worst < 3) return {name, problem: "focus outline " + st.outlineColor + " has contrast " + worst.toFixed(2) + ":1 against " + against + ", want at least 3:1"};
	return {name, problem: ""};
}`

// checkFocusRings presses Tab up to tabs times from the top of the page and
// fails the test for each control whose focus ring is missing or has less
// than 3:1 contrast with what surrounds it.
func checkFocusRings(t *testing.T, page playwright.Page, state string, tabs int) {
	t.Helper()
	must(t, page.Locator("body").Focus(), "%s: focusing the page", state)
	_, err := page.Evaluate(`() => document.activeElement && document.activeElement.blur()`)
	must(t, err, "%s: starting from the top of the page", state)
	seen := 0
	for i := 0; i < tabs; i++ {
		must(t, page.Keyboard().Press("Tab"), "%s: pressing Tab", state)
		raw, err := page.Evaluate(focusRings)
		must(t, err, "%s: reading the focus ring", state)
		var got struct{ Name, Problem string }
		if raw == nil || remarshal(raw, &got) != nil {
			continue
		}
		seen++
		if got.Problem != "" {
			t.Errorf("%s: Tab %d, %s: %s", state, i+1, got.Name, got.Problem)
		}
	}
	if seen == 0 {
		t.Errorf("%s: Tab never focused anything", state)
	}
}
