package e2e

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/deskclient"
)

// scriptedStep is one step of the scripted desk session: what a librarian does,
// and what must be seen.
type scriptedStep struct {
	Name string
	Run  func(ctx context.Context, c *deskclient.Client) error
}

// stepResult is a timed step of either session.
type stepResult struct {
	Name     string
	Wall     time.Duration
	App      time.Duration
	DB       time.Duration
	Requests int
	// Pages counts the HTML pages shown (a form post and the page it redirects to
	// count as one page: the redirect has no body).
	Pages int
	// Statements counts the SQL statements of every request of the step; Selects,
	// the SELECTs among them.
	Statements int
	Selects    int
}

// expectText checks that a page shows every text.
func expectText(p deskclient.Page, what string, texts ...string) error {
	for _, t := range texts {
		if !strings.Contains(p.Body, t) {
			return fmt.Errorf("%s: %s (status %d) does not show %q", what, p.URL, p.Status, t)
		}
	}
	return nil
}

// The link names the whole path, under the base path when the site has one.
var recordLinkRE = regexp.MustCompile(`<a href="[^"]*?(/records/\d+)">The Left Hand of Darkness</a>`)

// scriptedSteps are the desk session of docs/desk-session.md over HTTP, without
// a browser (deskclient: cookies, form posts, redirects).
func scriptedSteps() []scriptedStep {
	checkout := func(ctx context.Context, c *deskclient.Client, card string, barcodes []string, confirmFirst string) error {
		p, err := c.Post(ctx, "/checkout/patron", url.Values{"card": {card}})
		if err != nil {
			return err
		}
		if err := expectText(p, "scan "+card, `name="barcode"`); err != nil {
			return err
		}
		for i, bc := range barcodes {
			p, err := c.Post(ctx, "/checkout", url.Values{"barcode": {bc}})
			if err != nil {
				return err
			}
			if i == 0 && confirmFirst != "" {
				if err := expectText(p, "first item of "+card, confirmFirst, "Confirm checkout"); err != nil {
					return err
				}
				if p, err = c.Post(ctx, "/checkout", url.Values{"barcode": {bc}, "confirm": {"fines"}}); err != nil {
					return err
				}
			}
			if err := expectText(p, "check out "+bc, "<td>"+bc+"</td>"); err != nil {
				return err
			}
			if strings.Contains(p.Body, "Confirm checkout") {
				return fmt.Errorf("check out %s: asked for confirmation again", bc)
			}
		}
		return nil
	}
	checkin := func(ctx context.Context, c *deskclient.Client, barcodes []string, from string) error {
		if _, err := c.Get(ctx, "/checkin"); err != nil {
			return err
		}
		for _, bc := range barcodes {
			p, err := c.Post(ctx, "/checkin", url.Values{"barcode": {bc}})
			if err != nil {
				return err
			}
			if err := expectText(p, "check in "+bc, "<td>"+bc+"</td>", "Returned from "+from); err != nil {
				return err
			}
		}
		return nil
	}
	var record string
	return []scriptedStep{
		{"1 login", func(ctx context.Context, c *deskclient.Client) error {
			p, err := c.Get(ctx, "/")
			if err != nil {
				return err
			}
			if err := expectText(p, "the staff site", `<label for="username">Username</label>`); err != nil {
				return err
			}
			p, err = c.Login(ctx, "desk", "desk")
			if err != nil {
				return err
			}
			return expectText(p, "after login", "Morgan Desk", "Log out")
		}},
		{"2 reach checkout", func(ctx context.Context, c *deskclient.Client) error {
			p, err := c.Get(ctx, "/checkout")
			if err != nil {
				return err
			}
			return expectText(p, "Check out", `for="scan">Card number</label>`, `name="card"`)
		}},
		{"3 checkout A", func(ctx context.Context, c *deskclient.Client) error {
			return checkout(ctx, c, "P0001", []string{"I00001", "I00002", "I00003", "I00004", "I00005"}, "")
		}},
		{"4 checkin A", func(ctx context.Context, c *deskclient.Client) error {
			return checkin(ctx, c, []string{"I00001", "I00002", "I00003", "I00004", "I00005"}, "Alex Reader")
		}},
		{"5 checkout B", func(ctx context.Context, c *deskclient.Client) error {
			if _, err := c.Post(ctx, "/checkout/done", url.Values{}); err != nil {
				return err
			}
			return checkout(ctx, c, "P0002", []string{"I00006", "I00007", "I00008", "I00009", "I00010"}, "owes 12.50 in fines")
		}},
		{"6 search", func(ctx context.Context, c *deskclient.Client) error {
			p, err := c.Get(ctx, "/search?q="+url.QueryEscape("left hand of darkness"))
			if err != nil {
				return err
			}
			m := recordLinkRE.FindStringSubmatch(p.Body)
			if m == nil {
				return fmt.Errorf("search: no result titled The Left Hand of Darkness")
			}
			record = m[1]
			p, err = c.Get(ctx, record)
			if err != nil {
				return err
			}
			return expectText(p, "the record", "<td>I00010</td>", "Checked out")
		}},
		{"7 place hold", func(ctx context.Context, c *deskclient.Client) error {
			if _, err := c.Get(ctx, record+"/hold"); err != nil {
				return err
			}
			p, err := c.Post(ctx, record+"/hold", url.Values{"card": {"P0003"}, "pickup": {"CEN"}})
			if err != nil {
				return err
			}
			return expectText(p, "place hold", "Hold placed for Casey Waiting")
		}},
		{"8 checkin B", func(ctx context.Context, c *deskclient.Client) error {
			if err := checkin(ctx, c, []string{"I00006", "I00007", "I00008", "I00009", "I00010"}, "Blake Owing"); err != nil {
				return err
			}
			p, err := c.Get(ctx, "/checkin")
			if err != nil {
				return err
			}
			return expectText(p, "hold found", "Hold found", "Casey Waiting", "Central")
		}},
	}
}

// runScriptedSession runs the whole scripted desk session against base with a new
// client and returns each step's timing. A fresh demo library is needed for each
// run.
func runScriptedSession(ctx context.Context, base string) ([]stepResult, error) {
	c := deskclient.New(base)
	var out []stepResult
	for _, s := range scriptedSteps() {
		first := len(c.Timings)
		start := time.Now()
		if err := s.Run(ctx, c); err != nil {
			return out, fmt.Errorf("step %s: %w", s.Name, err)
		}
		r := stepResult{Name: s.Name, Wall: time.Since(start)}
		for _, t := range c.Timings[first:] {
			r.Requests++
			r.App += t.App
			r.DB += t.DB
			r.Statements += t.Statements
			r.Selects += t.Selects
			if t.Page {
				r.Pages++
			}
		}
		out = append(out, r)
	}
	return out, nil
}
