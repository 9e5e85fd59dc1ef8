package circulation

import (
	"fmt"
	"math"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// HistoryLoan is one loan of an item's or a patron's circulation history, current
// or returned.
type HistoryLoan struct {
	LoanID     int64
	ItemID     int64
	Barcode    string
	RecordID   int64
	Title      string
	Author     string
	CallNumber string
	// PatronID is 0 for an anonymised loan (loans.patron_id NULL), and
	// PatronCard and PatronName are then "".
	PatronID   int64
	PatronCard string
	PatronName string
	// Branch issued the loan; ReturnBranch took it back ("" while on loan).
	Branch       string
	ReturnBranch string
	IssuedAt     time.Time
	DueAt        time.Time
	// ReturnedAt is zero for a current loan.
	ReturnedAt time.Time
	Renewals   int
	// FineCents is what the loan was charged in overdue fines.
	FineCents int64
}

// Anonymised reports whether the loan no longer names its patron (package
// privacy's anonymisation sets loans.patron_id to NULL; a LEFT JOIN keeps the
// loan).
func (h HistoryLoan) Anonymised() bool { return h.PatronID == 0 }

// Current reports whether the item is still on this loan.
func (h HistoryLoan) Current() bool { return h.ReturnedAt.IsZero() }

// History is a list of loans, newest first, and whether there were more than the
// limit asked for.
type History struct {
	Loans []HistoryLoan
	More  bool
}

// ItemHistory returns an item's loans, newest first, at most limit of them (0 for
// all), in one query. An anonymised loan is listed without its
// patron: see HistoryLoan.Anonymised.
func ItemHistory(tx *db.Tx, itemID int64, limit int) (History, error) {
	// The item's loans from the rollup's item_loans (migration 0012), and those not
	// rolled up yet from the newest loans: an index on loans (item_id) would cost
	// every checkout a write.
	return history(tx, `l.id IN (SELECT loan_id FROM item_loans WHERE item_id = ?1
		UNION ALL SELECT id FROM loans WHERE id > (SELECT last_loan_id FROM report_rollup) AND item_id = ?1)`, itemID, limit)
}

// PatronHistory returns a patron's loans, current and returned, newest first, at
// most limit of them (0 for all), in one query. Anonymised loans no
// longer carry the patron's id, so they are not among them.
func PatronHistory(tx *db.Tx, patronID int64, limit int) (History, error) {
	return history(tx, "l.patron_id = ?1", patronID, limit)
}

func history(tx *db.Tx, cond string, id int64, limit int) (History, error) {
	// All rows: the largest LIMIT both engines take (PostgreSQL refuses -1).
	n := math.MaxInt32
	if limit > 0 {
		n = limit + 1
	}
	rows, err := tx.Query(`SELECT l.id, i.id, i.barcode, r.id, r.title, r.author, i.call_number,
			coalesce(p.id, 0), coalesce(p.card, ''), coalesce(trim(p.first_name || ' ' || p.surname), ''), b.name, coalesce(rb.name, ''),
			l.issued_at, l.due_at, l.returned_at, l.renewals,
			coalesce((SELECT sum(g.amount_cents) FROM ledger g WHERE g.patron_id = l.patron_id AND g.loan_id = l.id AND g.kind = 'overdue'), 0)
		FROM loans l JOIN items i ON i.id = l.item_id JOIN records r ON r.id = i.record_id
		LEFT JOIN patrons p ON p.id = l.patron_id JOIN branches b ON b.id = l.branch_id
		LEFT JOIN branches rb ON rb.id = l.return_branch_id
		WHERE `+cond+` ORDER BY l.issued_at DESC, l.id DESC LIMIT ?2`, id, n)
	if err != nil {
		return History{}, fmt.Errorf("circulation history: %w", err)
	}
	defer rows.Close()
	var h History
	for rows.Next() {
		var l HistoryLoan
		var issued, due db.Time
		var returned db.NullTime
		if err := rows.Scan(&l.LoanID, &l.ItemID, &l.Barcode, &l.RecordID, &l.Title, &l.Author, &l.CallNumber,
			&l.PatronID, &l.PatronCard, &l.PatronName, &l.Branch, &l.ReturnBranch,
			&issued, &due, &returned, &l.Renewals, &l.FineCents); err != nil {
			return History{}, err
		}
		l.IssuedAt, l.DueAt, l.ReturnedAt = issued.Time, due.Time, returned.Time
		h.Loans = append(h.Loans, l)
	}
	if limit > 0 && len(h.Loans) > limit {
		h.Loans, h.More = h.Loans[:limit], true
	}
	return h, rows.Err()
}
