package sip

import (
	"context"
	"errors"
	"strconv"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
)

// hold answers 15 with 16. Hold mode "+" places a hold on the title of the item
// (AB), or on that copy when the hold type (BY) is 3, for pickup at the branch BS
// (the account's branch by default); "-" cancels the patron's open hold on that
// title or copy; "*" (change) is not supported. A hold the desk would ask staff to
// confirm (the patron already holds the title, or has a copy out) is refused.
func (c *conn) hold(ctx context.Context, m *Message) {
	prefs := c.preferences(ctx)
	now := c.now()
	mode := m.fixedAt(0, 1)
	barcode := m.Get("AB")
	pickup := m.Get("BS")
	if pickup == "" {
		pickup = c.account.BranchCode
	}

	var (
		ok, available bool
		position      int
		title         string
		message       string
	)
	v, err := c.findPatron(ctx, m, needHolds)
	var item *catalog.Item
	if err == nil && v.authorized() {
		err = c.s.cfg.DB.Read(ctx, func(tx *db.Tx) error {
			var err error
			item, err = catalog.FindItemByBarcode(tx, barcode)
			return err
		})
		if item != nil {
			title, available = item.Title, item.Status == catalog.StatusAvailable
		}
	}
	switch {
	case err != nil && (stacks.ErrorCode(err) == stacks.ENOTFOUND || stacks.ErrorCode(err) == stacks.EINVALID):
		message = "Scan the barcode of a copy of the title you want to hold."
	case err != nil:
		c.internalError(ctx, "hold", err)
		message = msgTryAgain
	case mode == "+":
		if message = v.problem(prefs, now); message != "" {
			break
		}
		req := holds.PlaceRequest{Actor: c.actor(), RecordID: item.RecordID, PatronID: v.p.ID, PickupBranchCode: pickup}
		if m.Get("BY") == "3" {
			req.ItemID = item.ID
		}
		placed, err := c.s.circ.PlaceHold(ctx, req)
		var warn *holds.WarningError
		switch {
		case err == nil:
			ok, position = true, placed.Position
			message = "Hold placed. You are number " + strconv.Itoa(placed.Position) + " in the queue."
		case errors.As(err, &warn):
			message = "You have a copy of this title checked out already."
			if warn.Warnings[0].Code == holds.WarnAlreadyHolds {
				message = "You already have a hold on this title."
			}
		case stacks.ErrorField(err) == "pickup":
			message = "There is no pickup location " + pickup + "."
		case stacks.ErrorCode(err) == stacks.ECONFLICT:
			message = stacks.ErrorMessage(err) // the patron's own hold limit, a copy not for loan
		default:
			message = c.circulationError(ctx, "hold", err)
		}
	case mode == "-":
		if !v.authorized() {
			message = v.problem(prefs, now)
			break
		}
		message = "You have no hold on this title."
		for _, h := range v.holds {
			if h.RecordID != item.RecordID || (h.ItemID != 0 && h.ItemID != item.ID && h.TrappedItemID != item.ID) {
				continue
			}
			if _, err := c.s.circ.CancelHold(ctx, c.actor(), h.ID, "cancelled by the patron at self-check "+c.account.Username); err != nil {
				message = c.circulationError(ctx, "cancel hold", err)
			} else {
				ok, message = true, "Hold cancelled."
			}
			break
		}
	default:
		message = "Changing a hold is not possible here. Cancel it and place it again."
	}

	r := &c.resp
	r.start("16")
	r.ok(ok)
	r.flag(available)
	r.date(now, prefs.Location)
	if position > 0 {
		r.field("BR", strconv.Itoa(position))
	}
	r.field("AO", c.account.Institution)
	r.field("AA", v.card)
	r.optional("AB", barcode)
	r.optional("AJ", title)
	if ok && mode == "+" {
		r.field("BS", pickup)
	}
	r.optional("AF", message)
}
