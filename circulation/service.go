package circulation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
)

// Service runs circulation transactions against the library database.
type Service struct {
	DB *db.DB
	// Prefs supplies the preferences (fines limit, time zone); cached in server mode.
	Prefs *library.PreferenceCache
	// kept holds the rules and calendars a checkout uses (kept.go); nil
	// when the preferences are not cached either (CGI mode).
	kept *keptCirculation
	// heavyReadTimeout bounds a history read (WithHeavyReadTimeout).
	heavyReadTimeout time.Duration
}

// NewService returns a Service; prefs may be nil (preferences are then read per call).
func NewService(d *db.DB, prefs *library.PreferenceCache) *Service {
	if prefs == nil {
		prefs = library.NewPreferenceCache(false)
	}
	s := &Service{DB: d, Prefs: prefs}
	if prefs.Enabled() {
		s.kept = newKeptCirculation()
	}
	return s
}

// Block codes. A refusal cannot be overridden; the others need staff confirmation
// at the desk (Confirm), and SIP's policy decides them without a person.
const (
	// Refusals.
	BlockUnknownBarcode = "unknown_barcode"
	BlockCardExpired    = "card_expired"
	BlockPatronBlocked  = "patron_blocked"
	BlockWithdrawn      = "withdrawn"

	// Confirmations.
	BlockFines         = "fines"
	BlockOnLoanToOther = "on_loan"
	BlockHoldShelf     = "hold_shelf"
	BlockOnHold        = "on_hold"
	BlockMaxLoans      = "max_loans"
	BlockNotForLoan    = "not_for_loan"
	BlockLost          = "lost"
	// BlockRenew: the patron already has the item; confirming renews it.
	BlockRenew = "renew"
)

// Block is one reason a checkout cannot simply go ahead.
type Block struct {
	Code    string
	Message string
	// Overridable blocks can be confirmed by staff; the others refuse the checkout.
	Overridable bool
}

// BlockedError is returned when a checkout needs confirmation or is refused.
type BlockedError struct {
	Barcode string
	Title   string
	Blocks  []Block
}

func (e *BlockedError) Error() string {
	msgs := make([]string, len(e.Blocks))
	for i, b := range e.Blocks {
		msgs[i] = b.Message
	}
	return "checkout blocked: " + strings.Join(msgs, " ")
}

// Refused reports whether any block is a refusal.
func (e *BlockedError) Refused() bool {
	for _, b := range e.Blocks {
		if !b.Overridable {
			return true
		}
	}
	return false
}

// Codes returns the codes of the blocks.
func (e *BlockedError) Codes() []string {
	cs := make([]string, len(e.Blocks))
	for i, b := range e.Blocks {
		cs[i] = b.Code
	}
	return cs
}

// Has reports whether the error includes a block with the code.
func (e *BlockedError) Has(code string) bool {
	for _, b := range e.Blocks {
		if b.Code == code {
			return true
		}
	}
	return false
}

// Loan is a loan as the desk shows it.
type Loan struct {
	ID         int64
	ItemID     int64
	Barcode    string
	RecordID   int64
	Title      string
	Author     string
	CallNumber string
	PatronID   int64
	IssuedAt   time.Time
	DueAt      time.Time
	Renewals   int
	// RenewalsAllowed is the rule's limit, where known.
	RenewalsAllowed int
	// LostAt is set on a loan declared lost, ClaimedAt on one the patron claims
	// to have returned.
	LostAt    time.Time
	ClaimedAt time.Time
}

// Overdue reports whether the loan is past due at now.
func (l Loan) Overdue(now time.Time) bool { return now.After(l.DueAt) }

func (s *Service) prefs(ctx context.Context) (library.Preferences, error) {
	return s.Prefs.Get(ctx, s.DB)
}

// today returns midnight of now's local date in loc.
func today(now time.Time, loc *time.Location) time.Time {
	t := now.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
}

// loadCalendarFor loads a branch calendar covering from..to with a margin.
func loadCalendarFor(tx *db.Tx, branchID int64, loc *time.Location, from, to time.Time) (*library.Calendar, error) {
	return library.LoadCalendar(tx, branchID, loc, from.AddDate(0, 0, -1), to.AddDate(0, 0, 60))
}

// dueAt computes the due date of a loan issued now under rule at branchID.
func dueAt(tx *db.Tx, rule Rule, branchID int64, loc *time.Location) (time.Time, error) {
	now := tx.Now()
	cal, err := loadCalendarFor(tx, branchID, loc, now, now.Add(loanSpan(rule)))
	if err != nil {
		return time.Time{}, err
	}
	return cal.DueAt(now, rule.LoanPeriod, rule.LoanUnit), nil
}

// loanSpan is how long a loan under rule runs, before the calendar moves
// its due date.
func loanSpan(rule Rule) time.Duration {
	if rule.LoanUnit == "hours" {
		return time.Duration(rule.LoanPeriod) * time.Hour
	}
	return time.Duration(rule.LoanPeriod) * 24 * time.Hour
}

// itemWithLoan is an item and its current loan, if any, with the borrower.
type itemWithLoan struct {
	catalog.Item
	LoanID           int64
	LoanPatronID     int64
	LoanBranchID     int64
	LoanDue          db.NullTime
	LoanIssued       db.NullTime
	LoanRenewals     int
	BorrowerCategory int64
	BorrowerCard     string
	BorrowerName     string
	// BorrowerDeskMessage is the borrower's message for the desk ("Has a parcel
	// waiting"), shown at check in too.
	BorrowerDeskMessage string
	// CurrentBranch names the branch the item is at (or, in transit, left from).
	CurrentBranch BranchRef
	// LoanLostAt and LoanClaimedAt are set on a loan declared lost or claimed
	// returned: its fine stops there.
	LoanLostAt    db.NullTime
	LoanClaimedAt db.NullTime
	// LoanLostFineSettled: the declaration settled the fine up to LoanLostAt
	// (charged, or forgiven by the rule); the return charges none.
	LoanLostFineSettled bool
}

// fineEnd is when the loan's lateness stops counting: the return (now), or
// earlier when the loan was declared lost or claimed returned.
func (it *itemWithLoan) fineEnd(now time.Time) time.Time {
	end := now
	if it.LoanLostAt.Valid && it.LoanLostAt.Time.Before(end) {
		end = it.LoanLostAt.Time
	}
	if it.LoanClaimedAt.Valid && it.LoanClaimedAt.Time.Before(end) {
		end = it.LoanClaimedAt.Time
	}
	return end
}

// findItemWithLoan reads an item by barcode with its current loan, in one query.
func findItemWithLoan(tx *db.Tx, barcode string) (*itemWithLoan, error) {
	var it itemWithLoan
	dest := append(it.ItemScanDest(), &it.LoanID, &it.LoanPatronID, &it.LoanBranchID, &it.LoanDue, &it.LoanIssued,
		&it.LoanRenewals, &it.BorrowerCategory, &it.BorrowerCard, &it.BorrowerName, &it.LoanLostAt, &it.LoanClaimedAt,
		&it.LoanLostFineSettled, &it.BorrowerDeskMessage, &it.CurrentBranch.Code, &it.CurrentBranch.Name)
	err := tx.QueryRow(`SELECT `+catalog.ItemColumns+`,
			coalesce(l.id, 0), coalesce(l.patron_id, 0), coalesce(l.branch_id, 0), l.due_at, l.issued_at, coalesce(l.renewals, 0),
			coalesce(p.category_id, 0), coalesce(p.card, ''), coalesce(p.first_name || ' ' || p.surname, ''),
			l.lost_at, l.claimed_returned_at, coalesce(l.lost_fine_settled, 0), coalesce(p.desk_message, ''),
			cb.code, cb.name`+catalog.ItemFrom+`
		JOIN branches cb ON cb.id = i.current_branch_id
		LEFT JOIN loans l ON l.item_id = i.id AND l.returned_at IS NULL
		LEFT JOIN patrons p ON p.id = l.patron_id
		WHERE i.barcode = ?`, barcode).Scan(dest...)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, catalog.ErrUnknownBarcode(barcode)
		}
		return nil, fmt.Errorf("find item %q: %w", barcode, err)
	}
	return &it, nil
}

func formatMoney(cents int64) string { return stacks.FormatMoney(cents) }

// prepare opens every barcode-driven desk operation: it checks the actor and the
// barcode, and reads the preferences (before the write transaction, so that the
// serialized writer is not held for them).
func (s *Service) prepare(ctx context.Context, actor stacks.Actor, barcode string) (string, library.Preferences, error) {
	if err := requireActor(actor); err != nil {
		return "", library.Preferences{}, err
	}
	barcode, err := catalog.NormalizeBarcode(barcode)
	if err != nil {
		return "", library.Preferences{}, err
	}
	prefs, err := s.prefs(ctx)
	return barcode, prefs, err
}

// requireActor checks the actor can do circulation at a branch.
func requireActor(a stacks.Actor) error {
	if a.BranchID == 0 {
		return stacks.Errorf(stacks.EINVALID, "No branch is set for %s: circulation happens at a branch.", a.Name)
	}
	return nil
}
