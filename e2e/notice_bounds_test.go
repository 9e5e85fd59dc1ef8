package e2e

import (
	"context"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/db"
)

// TestNoticeTemplateRenderBound: an administrator types a template that loops
// without end; the live preview says why it cannot be shown, and Save template
// answers with the reason beside the plain-text body, saving nothing. The page
// in that state has no accessibility violation.
func TestNoticeTemplateRenderBound(t *testing.T) {
	t.Parallel()
	browser := launchBrowser(t)
	srv := startServer(t)
	page := newA11yPage(t, browser)
	_, err := page.Goto(srv.BaseURL + "/login")
	must(t, err, "opening the login page")
	login(t, page, "admin", "admin")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/$`)), "signed in")
	_, err = page.Goto(srv.BaseURL + "/admin/notices/templates/overdue1")
	must(t, err, "opening the template")
	must(t, page.Locator("#text").Fill("{{range 80000000}}{{end}}"), "typing an endless range")
	must(t, expect.Locator(page.Locator("#notice-preview")).ToContainText("loops or calls templates more than 100,000 times"), "the live preview says why")
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Save template"}).Click(), "saving")
	must(t, expect.Locator(page.Locator("#text-error")).ToContainText("The plain-text body loops or calls templates"), "the reason beside the field")
	checkA11y(t, page, "Notice template: a template past the render bounds")
	lib := openLibraryDB(t, srv)
	var n int
	must(t, lib.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM notice_templates`).Scan(&n)
	}), "counting saved templates")
	if n != 0 {
		t.Errorf("the template was saved (%d)", n)
	}
}
