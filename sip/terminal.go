package sip

import (
	"context"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// Screen messages of block patron, patron enable and item status update.
const (
	msgEnabled         = "Your card can be used again."
	msgNoItemProps     = "No item properties were sent, so nothing was changed."
	msgItemPropsStored = "The item properties were saved."
)

// blockPatron answers 01 (block patron) with 24, as SIP2 2.00 says. A self-check
// sends 01 when it keeps a card, or suspects misuse; the patron is blocked
// (patrons.BlockFromTerminal) with a staff note that says so and gives the
// terminal's message (AL) and whether the card was retained (the fixed field), and
// the block is marked as a terminal's, which patron enable (25) may lift. No PIN
// is needed: the machine blocks a card whose holder may never have given one. A
// patron staff already blocked keeps staff's block. An unknown card blocks
// nothing and is answered as 23 answers it.
func (c *conn) blockPatron(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	retained := m.fixedAt(0, 1) == "Y" || m.fixedAt(0, 1) == "y"
	var patronID int64
	err := c.s.cfg.DB.Write(ctx, func(tx *db.Tx) error {
		p, err := patrons.FindByCard(tx, m.Get("AA"))
		switch stacks.ErrorCode(err) {
		case "":
		case stacks.ENOTFOUND, stacks.EINVALID:
			return nil
		default:
			return err
		}
		patronID = p.ID
		return patrons.BlockFromTerminal(tx, c.actor(), p.ID, m.Get("AL"), retained)
	})
	switch {
	case err != nil:
		c.internalError(ctx, "block patron", err)
	case patronID != 0:
		c.s.log.Info("sip: patron blocked by the terminal", "conn", c.id, "remote", c.remote, "user", c.account.Username, "patron_id", patronID, "card_retained", retained)
	default:
		c.s.log.Info("sip: block patron for an unknown card; nothing blocked", "conn", c.id, "remote", c.remote, "user", c.account.Username)
	}
	v, ferr := c.findPatron(ctx, m, needStanding)
	if ferr != nil {
		c.internalError(ctx, "block patron", ferr)
		err = ferr
	}
	c.patronStatusResponse(&v, err, prefs, now)
}

// patronEnable answers 25 (patron enable) with 26. It lifts a block a terminal set
// (block patron, 01), never one staff set: a machine cannot judge staff's reasons,
// so a patron blocked by staff is sent to the desk. A PIN (AD), when sent, must be
// right. The answer has the patron's status after it, the name when authorized,
// valid patron (BL), valid PIN (CQ, when one was sent) and why the patron still
// cannot borrow, if they cannot.
func (c *conn) patronEnable(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	v, err := c.findPatron(ctx, m, needStanding)
	lifted := false
	if err == nil && v.authorized() && v.p.Blocked {
		err = c.s.cfg.DB.Write(ctx, func(tx *db.Tx) error {
			var err error
			lifted, err = patrons.EnableFromTerminal(tx, c.actor(), v.p.ID)
			return err
		})
		if lifted {
			v.p.Blocked, v.p.BlockNote = false, ""
			c.s.log.Info("sip: patron enabled by the terminal", "conn", c.id, "remote", c.remote, "user", c.account.Username, "patron_id", v.p.ID)
		}
	}
	if err != nil {
		c.internalError(ctx, "patron enable", err)
	}
	r := &c.resp
	r.start("26")
	r.patronStatus(&v, prefs, now)
	r.fixed(c.language())
	r.date(now, prefs.Location)
	r.field("AO", c.account.Institution)
	r.field("AA", v.card)
	c.patronName(&v)
	switch problem := v.problem(prefs, now); {
	case err != nil:
		r.field("AF", msgTryAgain)
	case problem != "":
		r.field("AF", problem)
	case lifted:
		r.field("AF", msgEnabled)
	}
}

// itemStatusUpdate answers 19 (item status update) with 20: the item properties
// (CH) are stored on the item (catalog.SetItemSIPProperties) and sent back, and
// item information (18) and this answer show them. The properties ok flag is 1
// when they were stored; an unknown item, properties that are not text or too
// long, or no CH field at all, change nothing and get 0.
func (c *conn) itemStatusUpdate(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	barcode := m.Get("AB")
	props, sent := m.Lookup("CH")
	var it *catalog.Item
	message := msgNoItemProps
	var err error
	bc, bcErr := catalog.NormalizeBarcode(barcode)
	switch {
	case !sent:
	case bcErr != nil:
		message = blockMessage(circulation.BlockUnknownBarcode)
	default:
		err = c.s.cfg.DB.Write(ctx, func(tx *db.Tx) error {
			found, err := catalog.FindItemByBarcode(tx, bc)
			if err != nil {
				return err
			}
			if err := catalog.SetItemSIPProperties(tx, c.actor(), found.ID, props); err != nil {
				return err
			}
			it = found
			it.SIPProperties = props
			return nil
		})
		switch {
		case err == nil:
			message = msgItemPropsStored
		case stacks.ErrorCode(err) == stacks.ENOTFOUND:
			it, message = nil, blockMessage(circulation.BlockUnknownBarcode)
		case stacks.ErrorCode(err) == stacks.EINVALID:
			it, message = nil, stacks.ErrorMessage(err)
		default:
			c.internalError(ctx, "item status update", err)
			it, message = nil, msgTryAgain
		}
	}
	r := &c.resp
	r.start("20")
	r.ok(it != nil)
	r.date(now, prefs.Location)
	if it == nil {
		r.field("AB", barcode)
		r.field("AF", message)
		return
	}
	r.field("AB", it.Barcode)
	r.field("AJ", it.Title)
	r.optional("CH", it.SIPProperties)
	r.field("AF", message)
}
