package sip

import (
	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
)

// OverridePolicy is SIP's answer to the checkout blocks that staff confirm at the
// desk, where no member of staff is present to confirm anything. It is passed to
// circulation as CheckoutRequest.AutoConfirm; the rules themselves are the desk's.
//
//   - renew (the patron already has the item, and the account's SameItemCheckout
//     is renew; by default the loan is answered as it is, and no block arises):
//     confirmed when the self-check's renewal policy (the first fixed field of
//     message 11) is "Y", so scanning a borrowed item again renews it; refused
//     when it is "N".
//   - every other block the desk would confirm (fines over the limit, on hold or
//     set aside for another patron, the loan limit, not for loan, marked lost or
//     missing, checked out to someone else) is refused: the patron is sent to the
//     desk, where staff can decide.
//   - with "no block" set (the machine lent the item while it was off-line, so the
//     loan has already happened), every block the desk could confirm is confirmed,
//     as staff would have to. Refusals (an expired card, a patron blocked by staff, a
//     withdrawn or unknown item) are never overridden, by the desk or by SIP.
func OverridePolicy(renewalPolicy, noBlock bool) func(circulation.Block) bool {
	return func(b circulation.Block) bool {
		if noBlock {
			return true
		}
		return b.Code == circulation.BlockRenew && renewalPolicy
	}
}

// blockMessage is what a self-check screen shows for a block: for the patron in
// front of it, so it never names another patron (the desk's messages do).
func blockMessage(code string) string {
	switch code {
	case circulation.BlockUnknownBarcode:
		return "This item was not found. Please take it to the desk."
	case circulation.BlockCardExpired:
		return "Your card has expired. Please see staff at the desk to renew it."
	case circulation.BlockPatronBlocked:
		return "Your account is blocked. Please see staff at the desk."
	case circulation.BlockWithdrawn, circulation.BlockLost:
		return "This item cannot be lent here. Please take it to the desk."
	case circulation.BlockFines:
		return "You owe more in fines than the limit. Please pay, or see staff at the desk."
	case circulation.BlockOnLoanToOther:
		return "This item is checked out to another patron. Please take it to the desk."
	case circulation.BlockHoldShelf, circulation.BlockOnHold:
		return "This item is on hold for another patron. Please take it to the desk."
	case circulation.BlockMaxLoans:
		return "You have as many items on loan as you are allowed."
	case circulation.BlockNotForLoan:
		return "This item is for use in the library only."
	case circulation.BlockRenew:
		return "You already have this item. Renew it instead, or see staff at the desk."
	}
	return "This item cannot be checked out here. Please see staff at the desk."
}

// errorMessage is what a self-check screen shows for an error that is not a
// checkout block. Messages of our own errors are for staff and may name other
// patrons, so only a few kinds pass through; the rest send the patron to the desk.
func errorMessage(err error, fallback string) string {
	switch stacks.ErrorCode(err) {
	case stacks.EINVALID, stacks.ENOTFOUND:
		return stacks.ErrorMessage(err)
	}
	return fallback
}
