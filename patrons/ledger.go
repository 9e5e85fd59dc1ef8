package patrons

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Ledger entry kinds. Charges (and refunds, money handed back) are positive
// amounts; payments, waivers, voids and credits negative.
const (
	KindOverdue = "overdue"
	KindLost    = "lost"
	KindFee     = "fee"
	// KindProcessing is the fee for handling a lost item, billed with it.
	KindProcessing = "processing"
	// KindManual is a charge of a configured type (ChargeType), made at the desk.
	KindManual  = "manual"
	KindPayment = "payment"
	KindWaiver  = "waiver"
	// KindVoid cancels the unpaid part of one charge (ReversesID).
	KindVoid = "void"
	// KindCredit gives back the paid part of one charge (ReversesID): the patron
	// is then in credit, which pays later charges or is refunded.
	KindCredit = "credit"
	// KindRefund is money handed back to a patron in credit, by a payment method.
	KindRefund = "refund"
)

// IsCharge reports whether kind is a charge (a positive line a payment can pay).
func IsCharge(kind string) bool {
	switch kind {
	case KindOverdue, KindLost, KindFee, KindProcessing, KindManual:
		return true
	}
	return false
}

// LedgerEntry is one row of a patron's fines ledger.
type LedgerEntry struct {
	ID   int64
	Kind string
	// AmountCents is positive for a charge, negative for a payment or waiver.
	AmountCents int64
	// LoanID is the loan a charge is for; 0 if none.
	LoanID      int64
	Description string
	// StaffName is the display name of the staff member who made the entry; empty
	// for the system or a self-service terminal.
	StaffName string
	CreatedAt time.Time
	// PaymentMethod is cash, card or other for a payment or refund taken at the
	// desk; empty otherwise.
	PaymentMethod string
	// ReversesID is the charge a void or credit reverses; 0 otherwise.
	ReversesID int64
}

// Balance returns what the patron owes, in cents: the sum of the ledger. It is
// negative if the patron is in credit.
func Balance(tx *db.Tx, patronID int64) (int64, error) {
	var cents int64
	err := tx.QueryRow(`SELECT coalesce(sum(amount_cents), 0) FROM ledger WHERE patron_id = ?`, patronID).Scan(&cents)
	if err != nil {
		return 0, fmt.Errorf("balance of patron %d: %w", patronID, err)
	}
	return cents, nil
}

// Ledger returns the patron's ledger, newest first.
func Ledger(tx *db.Tx, patronID int64) ([]LedgerEntry, error) {
	rows, err := tx.Query(`SELECT g.id, g.kind, g.amount_cents, coalesce(g.loan_id, 0), g.description,
		coalesce(s.display_name, ''), g.created_at, coalesce(g.payment_method, ''), coalesce(g.reverses_id, 0)
		FROM ledger g LEFT JOIN staff_users s ON s.id = g.staff_id
		WHERE g.patron_id = ? ORDER BY g.created_at DESC, g.id DESC`, patronID)
	if err != nil {
		return nil, fmt.Errorf("ledger of patron %d: %w", patronID, err)
	}
	defer rows.Close()
	var out []LedgerEntry
	for rows.Next() {
		var e LedgerEntry
		var at db.Time
		if err := rows.Scan(&e.ID, &e.Kind, &e.AmountCents, &e.LoanID, &e.Description, &e.StaffName, &at, &e.PaymentMethod, &e.ReversesID); err != nil {
			return nil, fmt.Errorf("ledger of patron %d: %w", patronID, err)
		}
		e.CreatedAt = at.Time
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger of patron %d: %w", patronID, err)
	}
	return out, nil
}

func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// Charge adds a charge to the patron's ledger: an overdue fine, a lost item, a
// processing fee or another fee, for loanID (0 if none). It is one INSERT and writes
// no audit entry: circulation charges overdue fines inside the checkin transaction
// and audits what it chooses to.
func Charge(tx *db.Tx, actor stacks.Actor, patronID int64, kind string, cents int64, loanID int64, description string) error {
	_, err := chargeID(tx, actor, patronID, kind, cents, loanID, description)
	return err
}

func chargeID(tx *db.Tx, actor stacks.Actor, patronID int64, kind string, cents int64, loanID int64, description string) (int64, error) {
	switch {
	case !IsCharge(kind) || kind == KindManual:
		return 0, stacks.Errorf(stacks.EINVALID, "A charge is an overdue fine, a lost item, a processing fee or a fee, not %q.", kind)
	case cents <= 0:
		return 0, stacks.FieldErrorf("amount", stacks.EINVALID, "A charge must be more than 0.00.")
	case !utf8.ValidString(description) || utf8.RuneCountInString(description) > maxLedger || hasControl(description):
		return 0, stacks.FieldErrorf("description", stacks.EINVALID, "Describe the charge in at most %d characters.", maxLedger)
	}
	var id int64
	err := tx.QueryRow(`INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, description, staff_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		patronID, kind, cents, nullID(loanID), strings.TrimSpace(description), nullID(actor.StaffID), db.FormatTime(tx.Now())).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("charge patron %d: %w", patronID, err)
	}
	return id, nil
}

// owing reads the patron's name and balance in one statement, for PayLines and
// WaiveLines.
func owing(tx *db.Tx, patronID int64) (name string, balance int64, err error) {
	var first, surname string
	err = tx.QueryRow(`SELECT p.first_name, p.surname,
		coalesce((SELECT sum(amount_cents) FROM ledger WHERE patron_id = p.id), 0)
		FROM patrons p WHERE p.id = ?`, patronID).Scan(&first, &surname, &balance)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", patronID)
	} else if err != nil {
		return "", 0, fmt.Errorf("balance of patron %d: %w", patronID, err)
	}
	p := Patron{FirstName: first, Surname: surname}
	return p.Name(), balance, nil
}

// waiveReason checks a waiver's reason and returns it trimmed.
func waiveReason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	switch {
	case !utf8.ValidString(reason) || utf8.RuneCountInString(reason) > maxLedger || hasControl(reason):
		return "", stacks.FieldErrorf("reason", stacks.EINVALID, "Write the reason on one line, in at most %d characters.", maxLedger)
	case reason == "":
		return "", stacks.FieldErrorf("reason", stacks.EINVALID, "Give the reason for waiving the fines; it is kept in the ledger.")
	}
	return reason, nil
}

func formatCents(cents int64) string { return stacks.FormatMoney(cents) }
