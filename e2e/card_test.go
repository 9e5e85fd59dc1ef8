package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/db"
)

// TestDeskCardAndRenewals: at Check out, a card's state is said when the card is
// scanned, before any item (an expired card, a blocked patron: a banner with the
// next step, and the question sound); a refused renewal is headed by its reason;
// renewing a loan made today is refused and not counted; "another patron is
// waiting" is overridden with a reason, which is audited. Each new state passes
// axe-core.
func TestDeskCardAndRenewals(t *testing.T) {
	t.Parallel()
	browser := launchBrowser(t)
	srv := startServer(t)
	lib := openLibraryDB(t, srv)
	page := newA11yPage(t, browser)
	must(t, page.Context().AddInitScript(playwright.Script{Content: playwright.String(`
		window.__played = [];
		HTMLMediaElement.prototype.play = function () {
			window.__played.push(this.getAttribute("data-sound"));
			return Promise.resolve();
		};`)}), "recording the sounds played")
	a := &a11yWalk{t: t, srv: srv, page: page}
	a.open("/login")
	login(t, page, "desk", "desk")
	must(t, expect.Locator(button(page, "Log out")).ToBeVisible(), "signed in")
	a.nav("Check out")
	played := func() string {
		t.Helper()
		v, err := page.Evaluate(`() => window.__played.join(",")`)
		must(t, err, "reading the sounds played")
		return v.(string)
	}
	heading := func(name string) playwright.Locator {
		return page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
	}
	// answered waits for the scan's row to be answered (the desk script's
	// queue empty).
	answered := func(scanned string) {
		t.Helper()
		must(t, expect.Locator(page.Locator(`#scan-list tr[data-scan="`+scanned+`"]`).First()).Not().ToHaveAttribute("data-outcome", "waiting"), "%s answered", scanned)
		must(t, expect.Locator(page.Locator(`#scan-list tr[data-outcome="waiting"]`)).ToHaveCount(0), "no scan waiting")
	}

	// finish ends the visit and waits until it has ended (the card field is
	// back): a page opened straight after the click would cancel its post.
	finish := func() {
		t.Helper()
		a.click("Finish with this patron")
		must(t, expect.Locator(a.field("Card number")).ToBeVisible(), "the visit ended")
	}

	t.Run("ExpiredCard", func(t *testing.T) {
		a.scan("Card number", "P0004")
		answered("P0004")
		must(t, expect.Locator(heading("Card expired")).ToBeVisible(), "P0004's banner, before any item")
		must(t, expect.Locator(page.Locator("#desk-patron")).ToContainText("Nothing can be lent until it is renewed"), "what it means")
		must(t, expect.Locator(button(page, "Renew card")).ToBeVisible(), "the next step: Renew card")
		if got := played(); got != "question" {
			t.Errorf("sounds after scanning an expired card: %q, want question", got)
		}
		if got := lib.loans("P0004"); len(got) != 0 {
			t.Errorf("loans of P0004 after a card scan: %v", got)
		}
		a.check("Check out: P0004's card scanned (expired)")
		finish()
	})

	t.Run("BlockedCard", func(t *testing.T) {
		a.scan("Card number", "P0005")
		answered("P0005")
		must(t, expect.Locator(heading("Patron blocked")).ToBeVisible(), "P0005's banner, before any item")
		must(t, expect.Locator(page.Locator("#desk-patron")).ToContainText("Blocked by staff:"), "the block's note")
		must(t, expect.Locator(page.Locator("#desk-patron").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Open the patron's page"})).ToBeVisible(), "the next step: the patron's page")
		if got := played(); got != "question,question" {
			t.Errorf("sounds after scanning a blocked card: %q, want question,question", got)
		}
		a.check("Check out: P0005's card scanned (blocked)")
		finish()
	})

	// The item P0001 borrows today, scanned again: refused at once, as renewing
	// would not move the due date (no renewal offered to hold the queue), and
	// not counted.
	t.Run("RenewSameDay", func(t *testing.T) {
		a.scan("Card number", "P0001")
		answered("P0001")
		if got := played(); got != "question,question" {
			t.Errorf("sounds after scanning a card in good standing: %q, want no new sound", got)
		}
		a.scan("Barcode", "I00001")
		must(t, expect.Locator(page.Locator(`#scan-list tr[data-scan="I00001"][data-outcome="done"]`)).ToHaveCount(1), "I00001 checked out")
		a.scan("Barcode", "I00001")
		must(t, expect.Locator(heading("The due date would not move: I00001 not renewed")).ToBeVisible(), "the refusal headed by its reason")
		must(t, expect.Locator(button(page, "Renew")).ToHaveCount(0), "no renewal offered")
		must(t, expect.Locator(page.Locator("#desk-banner")).ToContainText("No renewal was used."), "and says no renewal was used")
		if got := lib.loans("P0001"); got["I00001"] != 0 {
			t.Errorf("I00001 renewed %d times by a refused renewal", got["I00001"])
		}
		a.check("Check out: a renewal refused (due date would not move)")
		finish()
	})

	t.Run("OverrideHold", func(t *testing.T) {
		card, barcode, title, loanID := renewableLoan(t, lib)
		lib.placeHold(barcode, "P0003", "CEN")
		before := lib.loans(card)[barcode]
		a.scan("Card number", card)
		answered(card)
		renew := page.Locator("#desk-loans").GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Renew " + title, Exact: playwright.Bool(true)})
		must(t, renew.Click(), "Renew %s among the other loans", title)
		must(t, expect.Locator(heading("Another patron is waiting: "+barcode+" not renewed")).ToBeVisible(), "the refusal headed by its reason")
		reason := page.GetByLabel("Reason to renew " + barcode + " anyway")
		must(t, expect.Locator(reason).ToBeVisible(), "the override's reason field")
		a.check("Check out: a renewal refused (another patron waiting) with its override")
		if got := lib.loans(card)[barcode]; got != before {
			t.Fatalf("renewals %d after the refusal, want %d", got, before)
		}
		must(t, reason.Fill("Needed for an exam on Friday"), "giving the reason")
		a.click("Renew anyway")
		must(t, expect.Locator(page.Locator(`#scan-list tr[data-outcome="done"]`).Filter(playwright.LocatorFilterOptions{HasText: "renewed by staff override"})).ToHaveCount(1), "the renewal's row")
		if got := lib.loans(card)[barcode]; got != before+1 {
			t.Errorf("renewals %d after the override, want %d", got, before+1)
		}
		var detail, who string
		err := lib.d.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT a.detail, s.username FROM audit_log a JOIN staff_users s ON s.id = a.staff_id
				WHERE a.action = 'renew.override' AND a.object_type = 'loan' AND a.object_id = ?`, loanID).Scan(&detail, &who)
		})
		must(t, err, "reading the override's audit")
		if !strings.Contains(detail, "another patron is waiting") || !strings.Contains(detail, "Reason: Needed for an exam on Friday") || who != "desk" {
			t.Errorf("audit of the override: %q by %q", detail, who)
		}
		a.check("Check out: a renewal by staff override")
		finish()
	})

	// "Card reported lost" ticked on the patron's form: the card's scan says so.
	t.Run("LostCard", func(t *testing.T) {
		p := lib.patron("P0003")
		a.open(fmt.Sprintf("/patrons/%d/edit", p.ID))
		lost := page.GetByLabel("Card reported lost", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
		must(t, lost.Check(), "ticking Card reported lost")
		a.check("Patron form: Card reported lost ticked")
		a.click("Save changes")
		must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(fmt.Sprintf(`/patrons/%d$`, p.ID))), "back on the patron's page")
		if !lib.patron("P0003").CardLost {
			t.Fatal("the card is not stored as reported lost")
		}
		a.nav("Check out")
		a.scan("Card number", "P0003")
		answered("P0003")
		must(t, expect.Locator(heading("Card reported lost")).ToBeVisible(), "P0003's banner, before any item")
		must(t, expect.Locator(page.Locator("#desk-patron").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Edit the patron"})).ToBeVisible(), "the next step: a new card number")
		// The sounds recorded start again with each page loaded.
		if got := played(); got != "question" {
			t.Errorf("sounds after scanning a lost card: %q, want question", got)
		}
		a.check("Check out: P0003's card scanned (reported lost)")
	})
}

// renewableLoan finds a current loan of a patron of Central in good standing,
// issued before today, with renewals left, of a title that has no other copy:
// a hold on it then refuses its renewal.
func renewableLoan(t *testing.T, lib *libraryDB) (card, barcode, title string, loanID int64) {
	t.Helper()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	err := lib.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT p.card, i.barcode, r.title, l.id FROM loans l
			JOIN items i ON i.id = l.item_id JOIN records r ON r.id = i.record_id
			JOIN patrons p ON p.id = l.patron_id JOIN branches b ON b.id = p.home_branch_id
			WHERE l.returned_at IS NULL AND l.lost_at IS NULL AND l.claimed_returned_at IS NULL AND l.renewals = 0
			  AND l.issued_at < ? AND l.due_at > ? AND b.code = 'CEN' AND p.blocked = 0 AND p.expires_on > ?
			  AND p.desk_message = '' AND p.card <> 'P0003'
			  AND (SELECT count(*) FROM items o WHERE o.record_id = i.record_id) = 1
			  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
			ORDER BY l.id LIMIT 1`, db.FormatTime(today), db.FormatTime(today.AddDate(0, 0, 1)), today.Format(time.DateOnly)).Scan(&card, &barcode, &title, &loanID)
	})
	must(t, err, "finding a loan to renew")
	return card, barcode, title, loanID
}
