package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// deskStep is one step of the desk session of docs/desk-session.md.
type deskStep struct {
	name string
	run  func(t *testing.T, d *desk)
}

// desk is a librarian at the desk: a browser page signed in to one server.
type desk struct {
	srv  *server
	page playwright.Page
}

func (d *desk) field(label string) playwright.Locator {
	return d.page.GetByLabel(label, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
}

// scan types into a field and presses Enter, as a barcode scanner does.
func (d *desk) scan(t *testing.T, label, value string) {
	t.Helper()
	f := d.field(label)
	must(t, f.Fill(value), "typing %q into %q", value, label)
	must(t, f.Press("Enter"), "pressing Enter in %q", label)
}

// dueDate computes the due date a 21-day book loan issued now gets at Central, from
// the server's own calendar (holidays and Sundays moved to the next open day).
func dueDate(t *testing.T, srv *server) string {
	t.Helper()
	d, err := db.Open(srv.DB, db.Options{ReadConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var due time.Time
	err = d.Read(context.Background(), func(tx *db.Tx) error {
		b, err := library.FindBranchByCode(tx, "CEN")
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		cal, err := library.LoadCalendar(tx, b.ID, time.UTC, now, now.AddDate(0, 0, 90))
		if err != nil {
			return err
		}
		due = cal.DueAt(now, 21, "days")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return due.Format("2006-01-02 15:04")
}

// onCheckinPage matches the Check in page's URL: its Barcode field has the same
// label as Check out's, so a step must know which page it is on before scanning.
var onCheckinPage = regexp.MustCompile(`/checkin$`)

// deskSteps are the steps of the desk session implemented so far, in order.
func deskSteps() []deskStep {
	return []deskStep{
		{"1 login", func(t *testing.T, d *desk) {
			_, err := d.page.Goto(d.srv.BaseURL + "/")
			must(t, err, "opening the staff site")
			login(t, d.page, "desk", "desk")
			must(t, expect.Locator(d.page.GetByText("Morgan Desk").First()).ToBeVisible(), "the staff user's name")
			must(t, expect.Locator(button(d.page, "Log out")).ToBeVisible(), "a Log out button")
		}},
		{"2 reach checkout", func(t *testing.T, d *desk) {
			must(t, navLink(d.page, "Check out").Click(), "clicking Check out")
			must(t, expect.Locator(d.field("Card number")).ToBeFocused(), "the Card number field has focus")
		}},
		{"3 checkout A", func(t *testing.T, d *desk) {
			due := dueDate(t, d.srv)
			d.scan(t, "Card number", "P0001")
			must(t, expect.Locator(d.page.GetByText("Alex Reader").First()).ToBeVisible(), "the patron's name")
			must(t, expect.Locator(d.field("Barcode")).ToBeFocused(), "the Barcode field has focus")
			for i := 1; i <= 5; i++ {
				bc := fmt.Sprintf("I%05d", i)
				d.scan(t, "Barcode", bc)
				row := d.page.Locator("table.visit-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: bc})
				must(t, expect.Locator(row).ToBeVisible(), "%s in this visit's list", bc)
				must(t, expect.Locator(row).ToContainText(due), "%s due %s", bc, due)
				must(t, expect.Locator(d.field("Barcode")).ToBeFocused(), "the Barcode field has focus again")
			}
			must(t, expect.Locator(d.page.Locator(`table.visit-list tbody tr[data-outcome="done"]`)).ToHaveCount(5), "five items in this visit's list")
			must(t, expect.Locator(d.page.Locator("table.visit-list")).ToContainText("Pride and Prejudice"), "titles in the list")
		}},
		{"4 checkin A", func(t *testing.T, d *desk) {
			must(t, navLink(d.page, "Check in").Click(), "clicking Check in")
			must(t, expect.Page(d.page).ToHaveURL(onCheckinPage), "on the Check in page")
			must(t, expect.Locator(d.field("Barcode")).ToBeFocused(), "the Barcode field has focus")
			for i := 1; i <= 5; i++ {
				bc := fmt.Sprintf("I%05d", i)
				d.scan(t, "Barcode", bc)
				row := d.page.Locator("table.checkin-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: bc})
				must(t, expect.Locator(row).ToContainText("Returned from Alex Reader"), "%s listed as returned", bc)
			}
		}},
		{"5 checkout B", func(t *testing.T, d *desk) {
			must(t, navLink(d.page, "Check out").Click(), "clicking Check out")
			// The previous patron's visit (step 3) is still open: finish it first, as
			// staff do.
			finish := button(d.page, "Finish with this patron")
			must(t, expect.Locator(finish).ToBeVisible(), "the open visit of step 3 with its %q button", "Finish with this patron")
			must(t, finish.Click(), "finishing the previous visit")
			must(t, expect.Locator(d.field("Card number")).ToBeFocused(), "the Card number field has focus again")
			d.scan(t, "Card number", "P0002")
			must(t, expect.Locator(d.page.GetByText("Blake Owing").First()).ToBeVisible(), "the patron's name")
			d.scan(t, "Barcode", "I00006")
			must(t, expect.Locator(d.page.GetByText("owes 12.50 in fines")).ToBeVisible(), "the first item asks for confirmation naming the fines")
			must(t, expect.Locator(button(d.page, "Cancel")).ToBeVisible(), "a Cancel button")
			must(t, button(d.page, "Confirm checkout").Click(), "clicking Confirm checkout")
			for i := 6; i <= 10; i++ {
				bc := fmt.Sprintf("I%05d", i)
				if i > 6 {
					d.scan(t, "Barcode", bc)
				}
				must(t, expect.Locator(button(d.page, "Confirm checkout")).Not().ToBeAttached(), "%s goes through without asking again", bc)
				row := d.page.Locator("table.visit-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: bc})
				must(t, expect.Locator(row).ToBeVisible(), "%s in this visit's list", bc)
			}
			must(t, expect.Locator(d.page.Locator(`table.visit-list tbody tr[data-outcome="done"]`)).ToHaveCount(5), "five items in this visit's list")
		}},
		{"6 search", func(t *testing.T, d *desk) {
			must(t, navLink(d.page, "Search").Click(), "clicking Search")
			must(t, expect.Locator(d.field("Search")).ToBeFocused(), "the Search field has focus")
			d.scan(t, "Search", "left hand of darkness")
			link := d.page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "The Left Hand of Darkness", Exact: playwright.Bool(true)})
			must(t, expect.Locator(link).ToBeVisible(), "a result titled The Left Hand of Darkness")
			must(t, expect.Locator(d.page.Locator("table.results tbody tr").First()).ToContainText("The Left Hand of Darkness"), "it is the first result")
			must(t, link.Click(), "opening the record")
			row := d.page.Locator("table.items tbody tr").Filter(playwright.LocatorFilterOptions{HasText: "I00010"})
			must(t, expect.Locator(row).ToContainText("Checked out"), "the record shows I00010 checked out")
		}},
		{"7 place hold", func(t *testing.T, d *desk) {
			placeHold := d.page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Place hold", Exact: playwright.Bool(true)})
			must(t, placeHold.Click(), "clicking Place hold on the record")
			must(t, d.field("Card number").Fill("P0003"), "typing the card number")
			_, err := d.field("Pickup branch").SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Central"}})
			must(t, err, "choosing Central as the pickup branch")
			must(t, button(d.page, "Place hold").Click(), "clicking Place hold")
			must(t, expect.Locator(d.page.GetByText("Hold placed")).ToBeVisible(), "Hold placed")
			must(t, expect.Locator(d.page.GetByText("Hold placed")).ToContainText("Casey Waiting"), "the patron's name with Hold placed")
		}},
		{"8 checkin B", func(t *testing.T, d *desk) {
			must(t, navLink(d.page, "Check in").Click(), "clicking Check in")
			must(t, expect.Page(d.page).ToHaveURL(onCheckinPage), "on the Check in page")
			for i := 6; i <= 10; i++ {
				bc := fmt.Sprintf("I%05d", i)
				d.scan(t, "Barcode", bc)
				row := d.page.Locator("table.checkin-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: bc})
				must(t, expect.Locator(row).ToContainText("Returned from Blake Owing"), "%s listed as returned", bc)
				if i < 10 {
					must(t, expect.Locator(row).Not().ToContainText("Hold found"), "%s fills no hold", bc)
				}
			}
			found := d.page.Locator("section.hold-found")
			must(t, expect.Locator(found).ToContainText("Hold found"), "I00010 shows Hold found")
			must(t, expect.Locator(found).ToContainText("Casey Waiting"), "with the name of P0003's patron")
			must(t, expect.Locator(found).ToContainText("Central"), "and the pickup branch Central")
			row := d.page.Locator("table.checkin-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: "I00010"})
			must(t, expect.Locator(row).ToContainText("Hold found"), "the I00010 row says Hold found")
		}},
	}
}

// TestDeskSession runs the desk session of docs/desk-session.md in headless
// Chromium against a fresh demo library, asserting what each step must show, once
// with the persistent server and once with every request served by a new CGI
// process. TestLighttpd runs it again through a real web server.
func TestDeskSession(t *testing.T) {
	t.Parallel()
	browser := launchBrowser(t)
	for _, mode := range []struct {
		name string
		args []string
	}{{"server", nil}, {"cgi", []string{"--cgi"}}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel() // each on a server of its own
			shots := ""
			if mode.name == "server" {
				// make screenshots: a picture of each step, for the README and reviews.
				shots = os.Getenv("STACKS_SCREENSHOTS")
			}
			runDeskSession(t, browser, startServer(t, mode.args...), shots)
		})
	}
}

// runDeskSession runs the desk session's steps, each a subtest, in a new page
// against srv, which must hold a fresh demo library; srv.BaseURL may end in a
// sub-path. With shots set, it saves a picture of each step in that directory.
func runDeskSession(t *testing.T, browser playwright.Browser, srv *server, shots string) {
	page, _ := newPage(t, browser)
	d := &desk{srv: srv, page: page}
	for _, step := range deskSteps() {
		if !t.Run(step.name, func(t *testing.T) { step.run(t, d) }) {
			logPage(t, page)
			t.FailNow()
		}
		if shots != "" {
			name := filepath.Join(shots, strings.ReplaceAll(step.name, " ", "-")+".png")
			if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(name), FullPage: playwright.Bool(true)}); err != nil {
				t.Errorf("screenshot %s: %v", name, err)
			}
		}
	}
}
