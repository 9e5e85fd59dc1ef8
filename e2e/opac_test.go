package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/stackstest"
)

// opacServer starts `stacks serve --demo` with the patrons' catalogue on a free
// port of its own and returns the server and the catalogue's base URL.
func opacServer(t *testing.T) (*server, string) {
	t.Helper()
	port, err := stackstest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	opacURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	srv := startServer(t, "--opac-addr", fmt.Sprintf("127.0.0.1:%d", port))
	if err := stackstest.WaitHealthy(opacURL+"/healthz", startTimeout, nil); err != nil {
		t.Fatalf("the patrons' catalogue does not answer: %v\n%s", err, srv.Output())
	}
	return srv, opacURL
}

// deskService is the staff side, done through the circulation service on the
// server's database (as the desk would do it at Central).
type deskService struct {
	t    *testing.T
	circ *circulation.Service
	desk stacks.Actor
}

func openDesk(t *testing.T, srv *server) *deskService {
	l := openLibraryDB(t, srv)
	var desk stacks.Actor
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		desk.Name = "desk"
		return tx.QueryRow(`SELECT id, branch_id FROM staff_users WHERE username = 'desk'`).Scan(&desk.StaffID, &desk.BranchID)
	})
	if err != nil {
		t.Fatal(err)
	}
	return &deskService{t: t, circ: circulation.NewService(l.d, nil), desk: desk}
}

func (d *deskService) checkout(card, barcode string) {
	d.t.Helper()
	var id int64
	err := d.circ.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT id FROM patrons WHERE card = ?`, card).Scan(&id)
	})
	if err == nil {
		_, err = d.circ.Checkout(context.Background(), circulation.CheckoutRequest{Actor: d.desk, PatronID: id, Barcode: barcode,
			AutoConfirm: func(circulation.Block) bool { return true }})
	}
	if err != nil {
		d.t.Fatalf("checking %s out to %s at the desk: %v", barcode, card, err)
	}
}

// checkoutDaysAgo lends as checkout does, as if days ago: a loan its patron can
// renew today (renewing a loan made today would not move its due date).
func (d *deskService) checkoutDaysAgo(card, barcode string, days int) {
	d.t.Helper()
	now := d.circ.DB.Now
	d.circ.DB.Now = func() time.Time { return time.Now().AddDate(0, 0, -days) }
	defer func() { d.circ.DB.Now = now }()
	d.checkout(card, barcode)
}

// checkin checks an item in at Central and returns the name of the patron whose
// hold it fills ("" if none), as the desk's "Hold found" shows.
func (d *deskService) checkin(barcode string) string {
	d.t.Helper()
	res, err := d.circ.Checkin(context.Background(), circulation.CheckinRequest{Actor: d.desk, Barcode: barcode})
	if err != nil {
		d.t.Fatalf("checking %s in at the desk: %v", barcode, err)
	}
	if res.Hold == nil {
		return ""
	}
	return res.Hold.PatronName
}

// holdStatus reads the status of the patron's newest hold on the title.
func (d *deskService) holdStatus(card, title string) string {
	d.t.Helper()
	var status string
	err := d.circ.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT h.status FROM holds h JOIN patrons p ON p.id = h.patron_id JOIN records r ON r.id = h.record_id
			WHERE p.card = ? AND r.title = ? ORDER BY h.id DESC LIMIT 1`, card, title).Scan(&status)
	})
	if err != nil {
		d.t.Fatalf("the hold of %s on %s: %v", card, title, err)
	}
	return status
}

// opacViewports are the two screens the patrons' catalogue is tested on: a
// small phone (360 px wide, mobile first) and a desktop.
var opacViewports = []struct {
	name          string
	width, height int
	// The patron, the loan they renew, the title they hold and see trapped at
	// the desk (its copy out to P0002 first), and the title they hold, then
	// cancel.
	card, patronName, loan, loanTitle, held, heldTitle, heldSearch, cancelTitle string
}{
	{"Mobile360", 360, 740, "P0001", "Alex Reader", "I00001", "Pride and Prejudice", "I00002", "Kindred", "kindred", "Dune"},
	{"Desktop", 1280, 800, "P0003", "Casey Waiting", "I00003", "Nineteen Eighty-Four", "I00010", "The Left Hand of Darkness", "left hand of darkness", "Beloved"},
}

// TestOPAC is the patron's visit, in a browser without JavaScript (every page
// of the patrons' site works without it), on a phone and on a desktop: search,
// open the record, place a hold (signing in with card and PIN on the way),
// renew a loan, see the hold trapped when the desk checks the copy in, place
// another hold and cancel it, sign out.
func TestOPAC(t *testing.T) {
	t.Parallel()
	srv, opacURL := opacServer(t)
	desk := openDesk(t, srv)
	browser := launchBrowser(t)
	for _, vp := range opacViewports {
		t.Run(vp.name, func(t *testing.T) {
			desk.checkoutDaysAgo(vp.card, vp.loan, 7)
			desk.checkout("P0002", vp.held)
			page, _ := newPage(t, browser, playwright.BrowserNewContextOptions{
				Viewport:          &playwright.Size{Width: vp.width, Height: vp.height},
				JavaScriptEnabled: playwright.Bool(false),
			})
			link := func(name string) playwright.Locator {
				return page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
			}
			btn := func(name string) playwright.Locator {
				return page.GetByRole(*playwright.AriaRoleButton, playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
			}
			see := func(text, what string) {
				t.Helper()
				must(t, expect.Locator(page.GetByText(text).First()).ToBeVisible(), "%s: %q", what, text)
			}

			// Search.
			_, err := page.Goto(opacURL + "/")
			must(t, err, "opening the catalogue")
			must(t, page.GetByLabel("Search the catalogue").Fill(vp.heldSearch), "typing the search")
			must(t, btn("Search").Click(), "searching")
			must(t, link(vp.heldTitle).Click(), "opening %s from the results", vp.heldTitle)
			see("Call number", "the record's copies")
			see("Permanent link", "the record's permanent link")
			see("On loan until", "the copy out to P0002")

			// Place a hold: signing in on the way.
			must(t, link("Place a hold").Click(), "Place a hold")
			must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/signin\?next=`)), "asked to sign in")
			must(t, page.GetByLabel("Card number").Fill(vp.card), "card")
			must(t, page.GetByLabel("PIN").Fill("0000"), "a wrong PIN")
			must(t, btn("Sign in").Click(), "signing in with a wrong PIN")
			see("The card number or PIN is not right.", "the wrong PIN's message")
			must(t, page.GetByLabel("PIN").Fill("1234"), "PIN")
			must(t, btn("Sign in").Click(), "signing in")
			_, err = page.GetByLabel("Pickup branch").SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Central"}})
			must(t, err, "choosing Central")
			must(t, btn("Place hold").Click(), "placing the hold")
			see("Hold placed: "+vp.heldTitle+", to pick up at Central.", "the hold placed")
			see("Number 1 in the queue, to pick up at Central.", "the hold's place in the queue")

			// Renew.
			see("Due back on", "the loan's due date")
			must(t, btn("Renew "+vp.loanTitle).Click(), "renewing %s", vp.loanTitle)
			see(vp.loanTitle+" is renewed: it is now due back on", "the renewal")

			// The desk checks the copy in: the hold is trapped for this patron.
			if who := desk.checkin(vp.held); who != vp.patronName {
				t.Fatalf("checking %s in filled the hold of %q, want %q", vp.held, who, vp.patronName)
			}
			_, err = page.Reload()
			must(t, err, "reloading My account")
			see("Ready for you at Central until", "the trapped hold")

			// Another hold, then cancel it.
			must(t, link("Search").Click(), "going to Search")
			must(t, page.GetByLabel("Search the catalogue").Fill(vp.cancelTitle), "typing the search")
			must(t, btn("Search").Click(), "searching")
			must(t, link(vp.cancelTitle).Click(), "opening %s", vp.cancelTitle)
			must(t, link("Place a hold").Click(), "Place a hold")
			must(t, btn("Place hold").Click(), "placing the hold")
			see("Hold placed: "+vp.cancelTitle, "the second hold")
			// Cancelling asks first: "Keep the hold" keeps it, "Yes" cancels.
			must(t, link("Cancel hold on "+vp.cancelTitle).Click(), "Cancel hold")
			must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Cancel your hold on " + vp.cancelTitle + "?"})).ToBeVisible(), "the question")
			must(t, link("Keep the hold").Click(), "Keep the hold")
			must(t, expect.Locator(link("Cancel hold on "+vp.cancelTitle)).ToBeVisible(), "the hold kept on My account")
			if status := desk.holdStatus(vp.card, vp.cancelTitle); status != "queued" {
				t.Fatalf("the hold on %s is %s after Keep the hold, want queued", vp.cancelTitle, status)
			}
			must(t, link("Cancel hold on "+vp.cancelTitle).Click(), "Cancel hold")
			must(t, btn("Yes, cancel the hold").Click(), "Yes, cancel the hold")
			see("Your hold on "+vp.cancelTitle+" is cancelled.", "the cancellation")
			must(t, expect.Locator(link("Cancel hold on "+vp.cancelTitle)).ToHaveCount(0), "the cancelled hold is gone")
			if status := desk.holdStatus(vp.card, vp.cancelTitle); status != "cancelled" {
				t.Fatalf("the hold on %s is %s after Yes, cancel the hold, want cancelled", vp.cancelTitle, status)
			}
			see("Ready for you at Central until", "the trapped hold is still there")

			// Sign out.
			must(t, btn("Sign out").Click(), "signing out")
			see("You have signed out.", "signed out")
			resp, err := page.Goto(opacURL + "/account")
			must(t, err, "My account after sign-out")
			must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/signin\?next=`)), "My account needs signing in again")
			if resp.Status() != http.StatusOK {
				t.Errorf("sign-in page: %d", resp.Status())
			}
		})
	}
}

// TestOPACAccessibility checks every page of the patrons' site with axe-core
// (WCAG 2 A and AA, no violations), at 360 px and on a desktop, signed out and
// signed in, with its error states; and that nothing is wider than a 360 px
// screen.
func TestOPACAccessibility(t *testing.T) {
	t.Parallel()
	if _, err := axeSource(); err != nil {
		t.Fatal(err)
	}
	srv, opacURL := opacServer(t)
	desk := openDesk(t, srv)
	desk.checkout("P0002", "I00004")
	// Each viewport's patron has two loans, one of them overdue (a renew form
	// a loan and Renew all), and a fine and a payment on the fines page.
	for _, vp := range opacViewports {
		desk.checkout(vp.card, vp.loan)
		desk.checkout(vp.card, vp.held)
		err := desk.circ.DB.Write(context.Background(), func(tx *db.Tx) error {
			var pid int64
			if err := tx.QueryRow(`SELECT id FROM patrons WHERE card = ?`, vp.card).Scan(&pid); err != nil {
				return err
			}
			if _, err := tx.Exec(`UPDATE loans SET due_at = ? WHERE returned_at IS NULL AND item_id = (SELECT id FROM items WHERE barcode = ?)`,
				db.FormatTime(tx.Now().Add(-72*time.Hour)), vp.held); err != nil {
				return err
			}
			if err := patrons.Charge(tx, desk.desk, pid, patrons.KindFee, 250, 0, "Replacement card"); err != nil {
				return err
			}
			_, err := patrons.PayLines(tx, desk.desk, patrons.PayRequest{PatronID: pid, Cents: 100, Method: patrons.MethodCash})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	browser := launchBrowser(t)
	for _, vp := range opacViewports {
		t.Run(vp.name, func(t *testing.T) {
			page, _ := newPage(t, browser, playwright.BrowserNewContextOptions{
				BypassCSP: playwright.Bool(true),
				Viewport:  &playwright.Size{Width: vp.width, Height: vp.height},
			})
			check := func(path, state string) {
				t.Helper()
				if path != "" {
					_, err := page.Goto(opacURL + path)
					must(t, err, "opening %s", path)
				}
				checkA11y(t, page, vp.name+": "+state)
				wide, err := page.Evaluate(`() => document.documentElement.scrollWidth`)
				must(t, err, "measuring %s", state)
				var w float64
				if err := remarshal(wide, &w); err != nil || w == 0 {
					t.Fatalf("%s: reading the page's width %v: %v", state, wide, err)
				}
				if w > float64(vp.width) {
					t.Errorf("%s: %s is %.0f px wide on a %d px screen", vp.name, state, w, vp.width)
				}
			}
			btn := func(name string) playwright.Locator {
				return page.GetByRole(*playwright.AriaRoleButton, playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
			}
			check("/", "Start page")
			check("/search?q=the", "Search results")
			check("/search?q=the&available=1&branch=CEN&sort=title", "Search results, filtered")
			check("/search?q=zzzzqqq", "Search: nothing found")
			check("/search?q=a*+b*+c*+d*", "Search: refused")
			check("/records/4", "Record, on loan")
			check("/records/10", "Record, on the shelf")
			check("/records/99999999", "Record not found")
			check("/nowhere", "No such page")
			check("/signin", "Sign in")
			must(t, page.GetByLabel("Card number").Fill(vp.card), "card")
			must(t, page.GetByLabel("PIN").Fill("0000"), "wrong PIN")
			must(t, btn("Sign in").Click(), "signing in")
			must(t, expect.Locator(page.GetByText("not right")).ToBeVisible(), "the wrong PIN")
			check("", "Sign in: wrong PIN")
			must(t, page.GetByLabel("PIN").Fill("1234"), "PIN")
			must(t, btn("Sign in").Click(), "signing in")
			must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "My account"})).ToBeVisible(), "My account")
			must(t, expect.Locator(page.GetByText("Overdue: it was due back on")).ToBeVisible(), "the overdue loan")
			must(t, expect.Locator(btn("Renew all")).ToBeVisible(), "Renew all")
			check("", "My account, with loans (one overdue) and fines")
			check("/account/notices", "Notices")
			check("/records/4/hold", "Place a hold")
			must(t, btn("Place hold").Click(), "placing a hold")
			must(t, expect.Locator(page.GetByText("Hold placed").First()).ToBeVisible(), "the hold placed")
			check("", "My account, with a hold and its message")
			must(t, page.Locator(`a[aria-label^="Cancel hold on "]`).First().Click(), "Cancel hold")
			must(t, expect.Locator(btn("Yes, cancel the hold")).ToBeVisible(), "the question before cancelling")
			check("", "Cancel a hold: the question")
			must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Keep the hold", Exact: playwright.Bool(true)}).Click(), "Keep the hold")
			must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "My account"})).ToBeVisible(), "My account")
			check("/account/fines", "Fines and payments, with a fee and a payment")
			check("/account/pin", "Change PIN")
			must(t, page.GetByLabel("Current PIN").Fill("1234"), "current PIN")
			must(t, page.GetByLabel("New PIN", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill("12"), "new PIN")
			must(t, page.GetByLabel("New PIN again").Fill("12"), "new PIN again")
			must(t, btn("Change PIN").Click(), "changing the PIN")
			must(t, expect.Locator(page.Locator(".field-error")).ToBeVisible(), "the PIN's message")
			check("", "Change PIN: refused")
		})
	}
}
