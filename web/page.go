package web

import (
	"encoding/gob"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/staff"
)

// Page is what the layout needs on every page: who is signed in, where, and the
// messages to show.
type Page struct {
	Title       string
	LibraryName string
	User        *staff.User
	// Nav is the navigation entry to mark as current ("checkout", "checkin", ...).
	Nav     string
	Flashes []Flash
	// Sounds and ReceiptPaper are this desk PC's workstation settings (see
	// Workstation): the desk's sounds on or off (body data-sounds), and slips
	// printed for an 80 mm receipt printer (receipt.css) rather than a page.
	Sounds       bool
	ReceiptPaper bool
	// ScanGap is the workstation's scanner key gap in milliseconds (body
	// data-scan-gap): faster keys, then Enter, are a scan wherever the focus is.
	ScanGap int
}

// Flash is a one-off message shown at the top of the next page.
type Flash = kit.Flash

// navItem is one entry of the staff navigation.
type navItem struct {
	Key, Label, Href string
}

// navItems are the staff navigation; the labels are part of the desk contract
// (docs/desk-session.md).
var navItems = []navItem{
	{"checkout", "Check out", "/checkout"},
	{"checkin", "Check in", "/checkin"},
	{"patrons", "Patrons", "/patrons"},
	{"search", "Search", "/search"},
	{"holds", "Holds", "/holds"},
	{"transfers", "Transfers", "/transfers"},
	{"reports", "Reports", "/reports"},
}

// adminNav is shown to administrators only.
var adminNav = navItem{"admin", "Administration", "/admin"}

func (p *Page) navFor() []navItem {
	if p.User != nil && p.User.IsAdmin() {
		return append(navItems[:len(navItems):len(navItems)], adminNav)
	}
	return navItems
}

// FormErrors maps form field names to messages, for showing each beside its field.
type FormErrors = kit.FormErrors

func init() {
	// Sessions that scs's gob codec wrote hold the flashes under this name.
	gob.RegisterName("[]web.Flash", []Flash{})
}

// placeRefusal puts a refusal staff can act on where its form shows it: beside
// its field in errs, or, for one without a field, as the form's message, which
// it returns. internal reports an error that is no refusal (show it with
// s.Error).
func placeRefusal(err error, errs FormErrors) (message string, internal bool) {
	if stacks.ErrorCode(err) == stacks.EINTERNAL {
		return "", true
	}
	if f := stacks.ErrorField(err); f != "" {
		errs[f] = stacks.ErrorMessage(err)
		return "", false
	}
	return stacks.ErrorMessage(err), false
}
