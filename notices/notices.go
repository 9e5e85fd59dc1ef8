// Package notices tells patrons what the library needs them to know: a hold is
// waiting, a hold is about to expire on the shelf, a loan falls due soon or is
// overdue, a card is about to expire, a lost item is billed. It owns the notice
// queue, the patrons' delivery choices, the templates and the daily run.
//
// The flow has three steps, each safe to repeat after a crash:
//
//  1. Triggers record one notice item per occurrence (this loan, first overdue).
//     The daily run finds loan, hold and card items; a trapped hold is recorded
//     at once, inside the checkin's own transaction (QueueHoldAvailable), and a
//     lost item's bill by the code that bills it (QueueLostBill). A unique key on
//     (trigger, object, occurrence, level) means an occurrence is never recorded
//     twice; the occurrence is the loan's due date or the hold's trap, so a
//     renewed loan or a hold trapped again is told again.
//  2. Compose groups each patron's new items into one message per delivery
//     (email or print: the digest) rendered from the templates, and queues it.
//  3. Deliver sends the pending email messages through the SMTP relay, retrying
//     with exponential backoff; printed notices wait in their branch's print
//     batch until staff mark them printed.
//
// Days are the library's: local dates in the library's time zone, and open days
// of the branch's calendar.
package notices

import "time"

// Triggers: what a notice item is about. The patron's choice of delivery is kept
// per trigger (Kinds).
const (
	TriggerHoldAvailable = "hold_available"
	TriggerHoldExpiring  = "hold_expiring"
	TriggerPredue        = "predue"
	TriggerOverdue       = "overdue"
	TriggerCardExpiry    = "card_expiry"
	TriggerLostBill      = "lost_bill"
)

// Kind is a kind of notice: what a patron chooses a delivery for, and (with the
// overdue levels apart) what a template is written for.
type Kind struct {
	Trigger string
	Label   string
}

// Kinds are the notice kinds in the order pages show them.
var Kinds = []Kind{
	{TriggerHoldAvailable, "Hold available"},
	{TriggerHoldExpiring, "Hold about to expire"},
	{TriggerPredue, "Due soon"},
	{TriggerOverdue, "Overdue"},
	{TriggerCardExpiry, "Card about to expire"},
	{TriggerLostBill, "Lost item bill"},
}

// KindLabel names a trigger for people.
func KindLabel(trigger string) string {
	for _, k := range Kinds {
		if k.Trigger == trigger {
			return k.Label
		}
	}
	return trigger
}

// Deliveries.
const (
	DeliveryEmail = "email"
	DeliveryPrint = "print"
	DeliveryNone  = "none"
)

// Message statuses.
const (
	StatusPending = "pending"
	StatusSent    = "sent"
	StatusFailed  = "failed"
	// StatusCancelled: dropped unsent when its turn came, no longer needed;
	// LastError says why.
	StatusCancelled = "cancelled"
)

// MaxAttempts is how many times a message is tried before it is failed for good
// (staff can still resend it, one or all failed at once). With the backoff below
// (1, 2, 4, ... 256 minutes, then 6 hours) the last attempt comes about 26 hours
// after the first, so a relay down for most of a day loses nothing.
const MaxAttempts = 13

// Backoff returns how long to wait before the attempt after attempts failed ones:
// 1, 2, 4, ... minutes, at most 6 hours.
func Backoff(attempts int) time.Duration {
	if attempts < 1 {
		attempts = 1
	}
	d := time.Minute << min(attempts-1, 20)
	return min(d, 6*time.Hour)
}

// Item is one notice item: one occurrence of a trigger, with what the notice says.
type Item struct {
	ID       int64
	Trigger  string
	ObjectID int64
	// Occurrence tells occurrences of one object apart: the loan's due date
	// (a renewal is a new one), the hold's trap time; else "".
	Occurrence string
	Level      int
	PatronID   int64
	Day        string
	Title      string
	Author     string
	Barcode    string
	// At is the instant that matters: the due time, the pickup deadline, the
	// card's expiry.
	At          time.Time
	BranchID    int64
	BranchName  string
	AmountCents int64
	// Delivery is "" until the item is composed into a message.
	Delivery  string
	MessageID int64
}

// Message is one queued message: a digest of a patron's items for one delivery.
type Message struct {
	ID            int64
	PatronID      int64
	PatronName    string
	PatronCard    string
	Delivery      string
	BranchID      int64
	BranchName    string
	Day           string
	To            string
	Subject       string
	Text          string
	HTML          string
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	CreatedAt     time.Time
	SentAt        time.Time
	// Kinds lists the triggers of the message's items, for the queue page.
	Kinds []string
}
