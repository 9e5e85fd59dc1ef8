package circulation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/notices"
	"github.com/stacks-ils/stacks/patrons"
)

// A lost loan stays current (returned_at NULL) with lost_at set and its item's
// status lost, until the item comes back or is written off: the patron owes the
// bill, the loan's history names the patron, and the check-in that finds the item
// reverses the bill by the rule. A claimed-returned loan likewise stays current,
// with claimed_returned_at set and the item on loan: its fine stops counting at the
// claim, and the daily job does not make it lost.

// LostBill is what declaring a loan lost charged.
type LostBill struct {
	LoanID           int64
	PatronID         int64
	Title            string
	Barcode          string
	ReplacementCents int64
	ProcessingCents  int64
	// FineCents is the overdue fine accrued until the declaration, charged with
	// it (0 when the loan was not late or the rule forgives it).
	FineCents int64
	// FineForgiven: the rule forgave a fine that had accrued.
	FineForgiven bool
}

// Total is the whole bill.
func (b LostBill) Total() int64 { return b.ReplacementCents + b.ProcessingCents }

// Billed is everything the declaration charges: the bill and the overdue fine
// charged with it.
func (b LostBill) Billed() int64 { return b.Total() + b.FineCents }

// lostLoan is a current loan with what billing it needs.
type lostLoan struct {
	LoanID, PatronID, ItemID, CategoryID, ItemTypeID, BranchID int64
	Title, Barcode                                             string
	PriceCents, DefaultPriceCents                              int64
	Due                                                        db.Time
	LostAt, ClaimedAt                                          db.NullTime
}

const lostLoanSelect = `SELECT l.id, l.patron_id, i.id, p.category_id, i.item_type_id, l.branch_id, r.title, i.barcode,
		i.price_cents, t.default_price_cents, l.due_at, l.lost_at, l.claimed_returned_at
	FROM loans l JOIN items i ON i.id = l.item_id JOIN records r ON r.id = i.record_id
	JOIN item_types t ON t.id = i.item_type_id JOIN patrons p ON p.id = l.patron_id`

func scanLostLoan(row interface{ Scan(...any) error }) (lostLoan, error) {
	var l lostLoan
	err := row.Scan(&l.LoanID, &l.PatronID, &l.ItemID, &l.CategoryID, &l.ItemTypeID, &l.BranchID, &l.Title, &l.Barcode,
		&l.PriceCents, &l.DefaultPriceCents, &l.Due, &l.LostAt, &l.ClaimedAt)
	return l, err
}

// findCurrentLoan reads a current loan of patronID (any patron if 0) for billing.
func findCurrentLoan(tx *db.Tx, patronID, loanID int64) (lostLoan, error) {
	l, err := scanLostLoan(tx.QueryRow(lostLoanSelect+` WHERE l.id = ? AND l.returned_at IS NULL AND (? = 0 OR l.patron_id = ?)`,
		loanID, patronID, patronID))
	if errors.Is(err, sql.ErrNoRows) {
		return lostLoan{}, stacks.Errorf(stacks.ENOTFOUND, "That is not a current loan of this patron; it may have been checked in a moment ago. Reload the page.")
	} else if err != nil {
		return lostLoan{}, fmt.Errorf("find loan %d: %w", loanID, err)
	}
	return l, nil
}

// DeclareLost declares a current loan lost, from the patron's loans: the item's
// status becomes lost and the patron is billed the replacement cost (the item's
// price, else its type's default) and the rule's processing fee.
// The loan must be patronID's (0 skips the check).
func (s *Service) DeclareLost(ctx context.Context, actor stacks.Actor, patronID, loanID int64) (LostBill, error) {
	return s.declareLost(ctx, actor, patronID, loanID, -1)
}

// QuoteLost says what declaring a current loan lost would bill now (the
// replacement cost, the processing fee, the overdue fine until now or its
// forgiveness), without writing anything: the desk asks staff to confirm it.
// The loan must be patronID's (0 skips the check).
func (s *Service) QuoteLost(ctx context.Context, patronID, loanID int64) (LostBill, error) {
	prefs, err := s.prefs(ctx)
	if err != nil {
		return LostBill{}, err
	}
	var bill LostBill
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		l, rule, err := lostCandidate(tx, patronID, loanID)
		if err != nil {
			return err
		}
		bill, _, err = quoteLost(tx, l, rule, prefs.Location)
		return err
	})
	return bill, err
}

// DeclareLostAsQuoted is DeclareLost for a bill staff confirmed: quotedCents is
// the whole amount the confirmation showed (LostBill.Billed of QuoteLost). If the
// bill is different now (a day's fine more, a price changed), nothing is written
// and the error (ECONFLICT) says so: the desk asks again with the new amount.
func (s *Service) DeclareLostAsQuoted(ctx context.Context, actor stacks.Actor, patronID, loanID, quotedCents int64) (LostBill, error) {
	if quotedCents < 0 {
		return LostBill{}, stacks.Errorf(stacks.EINVALID, "The confirmation named no amount; declare the item lost again from the patron's loans.")
	}
	return s.declareLost(ctx, actor, patronID, loanID, quotedCents)
}

// declareLost bills the loan; quoted, unless -1, is the amount staff confirmed.
func (s *Service) declareLost(ctx context.Context, actor stacks.Actor, patronID, loanID, quoted int64) (LostBill, error) {
	prefs, err := s.prefs(ctx)
	if err != nil {
		return LostBill{}, err
	}
	var bill LostBill
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		l, rule, err := lostCandidate(tx, patronID, loanID)
		if err != nil {
			return err
		}
		loc := prefs.Location
		if loc == nil {
			loc = time.UTC
		}
		q, late, err := quoteLost(tx, l, rule, loc)
		if err != nil {
			return err
		}
		if quoted >= 0 && q.Billed() != quoted {
			bill = q
			return stacks.Errorf(stacks.ECONFLICT, "The bill for %s (%s) is %s now, not the %s confirmed; confirm the new amount.",
				l.Title, l.Barcode, formatMoney(q.Billed()), formatMoney(quoted))
		}
		bill, err = billQuoted(tx, actor, l, q, late, loc, "declared lost by staff")
		return err
	})
	return bill, err
}

// lostCandidate reads a current loan of patronID that is not lost yet, and its
// rule.
func lostCandidate(tx *db.Tx, patronID, loanID int64) (lostLoan, Rule, error) {
	l, err := findCurrentLoan(tx, patronID, loanID)
	if err != nil {
		return lostLoan{}, Rule{}, err
	}
	if l.LostAt.Valid {
		return lostLoan{}, Rule{}, stacks.Errorf(stacks.ECONFLICT, "%s (%s) is already declared lost.", l.Title, l.Barcode)
	}
	rule, err := ResolveRule(tx, l.CategoryID, l.ItemTypeID, l.BranchID)
	if err != nil {
		return lostLoan{}, Rule{}, err
	}
	return l, rule, nil
}

// quoteLost works out the bill of l by rule at tx.Now(), reading only: the
// replacement cost, the processing fee and the overdue fine accrued until now
// (or until a claim, which stopped it), as a check-in now would charge it (by
// the rule, the calendar and the cap). late is how late the fine counts.
func quoteLost(tx *db.Tx, l lostLoan, rule Rule, loc *time.Location) (bill LostBill, late string, err error) {
	bill = LostBill{LoanID: l.LoanID, PatronID: l.PatronID, Title: l.Title, Barcode: l.Barcode,
		ReplacementCents: l.PriceCents, ProcessingCents: rule.ProcessingFeeCents}
	if bill.ReplacementCents <= 0 {
		bill.ReplacementCents = l.DefaultPriceCents
	}
	if loc == nil {
		loc = time.UTC
	}
	end := tx.Now()
	if l.ClaimedAt.Valid && l.ClaimedAt.Time.Before(end) {
		end = l.ClaimedAt.Time
	}
	if end.After(l.Due.Time) {
		it := &itemWithLoan{LoanID: l.LoanID, LoanPatronID: l.PatronID, LoanBranchID: l.BranchID,
			LoanDue: db.NullTime{Time: l.Due.Time, Valid: true}, BorrowerCategory: l.CategoryID}
		it.ItemTypeID = l.ItemTypeID
		fine, lateBy, err := overdueFine(tx, it, end, loc)
		if err != nil {
			return LostBill{}, "", err
		}
		switch {
		case fine > 0 && rule.LostForgiveFine:
			bill.FineForgiven = true
		case fine > 0:
			bill.FineCents = fine
			late = lateBy
		}
	}
	return bill, late, nil
}

// billLost marks l lost and bills it by rule, and queues the patron's notice.
func billLost(tx *db.Tx, actor stacks.Actor, l lostLoan, rule Rule, loc *time.Location, why string) (LostBill, error) {
	if loc == nil {
		loc = time.UTC
	}
	bill, late, err := quoteLost(tx, l, rule, loc)
	if err != nil {
		return LostBill{}, err
	}
	return billQuoted(tx, actor, l, bill, late, loc, why)
}

// billQuoted marks l lost and bills it as quoteLost quoted (bill, and late, the
// time overdue it charges), and queues the patron's notice.
func billQuoted(tx *db.Tx, actor stacks.Actor, l lostLoan, bill LostBill, late string, loc *time.Location, why string) (LostBill, error) {
	res, err := tx.Exec(`UPDATE loans SET lost_at = ?, lost_fine_settled = 1 WHERE id = ? AND lost_at IS NULL AND returned_at IS NULL`,
		db.FormatTime(tx.Now()), l.LoanID)
	if err != nil {
		return LostBill{}, fmt.Errorf("mark loan %d lost: %w", l.LoanID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return LostBill{}, stacks.Errorf(stacks.ECONFLICT, "%s (%s) is already declared lost or checked in.", l.Title, l.Barcode)
	}
	if err := catalog.SetItemStatus(tx, l.ItemID, catalog.StatusLost); err != nil {
		return LostBill{}, err
	}
	// The return charges nothing more for the lost period (lost_fine_settled).
	if bill.FineCents > 0 {
		desc := fmt.Sprintf("Overdue: %s (%s), %s late, until declared lost", l.Title, l.Barcode, late)
		if err := patrons.Charge(tx, actor, l.PatronID, patrons.KindOverdue, bill.FineCents, l.LoanID, desc); err != nil {
			return LostBill{}, err
		}
	}
	if bill.ReplacementCents > 0 {
		desc := fmt.Sprintf("Lost: %s (%s), replacement cost", l.Title, l.Barcode)
		if err := patrons.Charge(tx, actor, l.PatronID, patrons.KindLost, bill.ReplacementCents, l.LoanID, desc); err != nil {
			return LostBill{}, err
		}
	}
	if bill.ProcessingCents > 0 {
		desc := fmt.Sprintf("Lost: %s (%s), processing fee", l.Title, l.Barcode)
		if err := patrons.Charge(tx, actor, l.PatronID, patrons.KindProcessing, bill.ProcessingCents, l.LoanID, desc); err != nil {
			return LostBill{}, err
		}
	}
	if bill.Total() > 0 {
		if err := notices.QueueLostBill(tx, l.LoanID, bill.Total(), loc); err != nil {
			return LostBill{}, err
		}
	}
	fineNote := formatMoney(bill.FineCents)
	if bill.FineForgiven {
		fineNote = "forgiven by the rule"
	}
	return bill, tx.Audit(actor, "loan.lost", "loan", l.LoanID, fmt.Sprintf("%s (%s) %s: replacement %s, processing %s, overdue fine %s",
		l.Title, l.Barcode, why, formatMoney(bill.ReplacementCents), formatMoney(bill.ProcessingCents), fineNote))
}

// ClaimReturned records that the patron says they returned a loan's item: the
// loan stays current, but its overdue fine stops counting now and the daily job
// never declares it lost. When the item is found, a normal check-in closes the
// claim. A lost loan cannot be claimed (its bill is already made).
// The loan must be patronID's (0 skips the check).
func (s *Service) ClaimReturned(ctx context.Context, actor stacks.Actor, patronID, loanID int64) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		l, err := findCurrentLoan(tx, patronID, loanID)
		if err != nil {
			return err
		}
		switch {
		case l.LostAt.Valid:
			return stacks.Errorf(stacks.ECONFLICT, "%s (%s) is declared lost and billed; check it in if it is found.", l.Title, l.Barcode)
		case l.ClaimedAt.Valid:
			return stacks.Errorf(stacks.ECONFLICT, "%s (%s) is already claimed returned.", l.Title, l.Barcode)
		}
		if _, err := tx.Exec(`UPDATE loans SET claimed_returned_at = ? WHERE id = ?`, db.FormatTime(tx.Now()), loanID); err != nil {
			return fmt.Errorf("claim loan %d returned: %w", loanID, err)
		}
		// Counted on the patron: the loan is anonymised in time, the count stays.
		if _, err := tx.Exec(`UPDATE patrons SET claims_returned_count = claims_returned_count + 1 WHERE id = ?`, l.PatronID); err != nil {
			return fmt.Errorf("count claim of patron %d: %w", l.PatronID, err)
		}
		return tx.Audit(actor, "loan.claimed_returned", "loan", loanID, fmt.Sprintf("%s (%s)", l.Title, l.Barcode))
	})
}

// ClaimedLoan is a loan the patron claimed to have returned.
type ClaimedLoan struct {
	LoanID     int64
	PatronID   int64 // 0 once the loan is anonymised
	PatronName string
	PatronCard string
	Barcode    string
	Title      string
	BranchName string
	DueAt      time.Time
	ClaimedAt  time.Time
	// ReturnedAt is when the item was found and the claim closed; zero while open.
	ReturnedAt time.Time
}

// ClaimsFilter chooses the claims ClaimedReturned lists.
type ClaimsFilter struct {
	// BranchID is the branch that issued the loans; 0 for every branch.
	BranchID int64
	// All lists closed claims too (the item found and checked in), not only open ones.
	All bool
	// Limit and Offset page the list (oldest claim first).
	Limit, Offset int
}

// ClaimedReturned lists claims, oldest first, in one query. It reads one row more
// than the limit, and says with more whether there are further pages.
func ClaimedReturned(tx *db.Tx, f ClaimsFilter) (claims []ClaimedLoan, more bool, err error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	rows, err := tx.Query(`SELECT l.id, coalesce(l.patron_id, 0), coalesce(p.first_name || ' ' || p.surname, ''), coalesce(p.card, ''),
			i.barcode, r.title, b.name, l.due_at, l.claimed_returned_at, coalesce(l.returned_at, '')
		FROM loans l JOIN items i ON i.id = l.item_id JOIN records r ON r.id = i.record_id
		LEFT JOIN patrons p ON p.id = l.patron_id JOIN branches b ON b.id = l.branch_id
		WHERE l.claimed_returned_at IS NOT NULL AND (? = 1 OR l.returned_at IS NULL) AND (? = 0 OR l.branch_id = ?)
		ORDER BY l.claimed_returned_at, l.id LIMIT ? OFFSET ?`, f.All, f.BranchID, f.BranchID, f.Limit+1, f.Offset)
	if err != nil {
		return nil, false, fmt.Errorf("claims returned: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c ClaimedLoan
		var due, at db.Time
		var returned string
		if err := rows.Scan(&c.LoanID, &c.PatronID, &c.PatronName, &c.PatronCard, &c.Barcode, &c.Title, &c.BranchName, &due, &at, &returned); err != nil {
			return nil, false, err
		}
		c.DueAt, c.ClaimedAt = due.Time, at.Time
		if returned != "" {
			if t, err := db.ParseTime(returned); err == nil {
				c.ReturnedAt = t
			}
		}
		claims = append(claims, c)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(claims) > f.Limit {
		return claims[:f.Limit], true, nil
	}
	return claims, false, nil
}

// MarkMissing marks an item that is not on the shelf where it should be as
// missing. An item on loan, on the hold shelf or in transit cannot be.
func (s *Service) MarkMissing(ctx context.Context, actor stacks.Actor, barcode string) error {
	barcode, err := catalog.NormalizeBarcode(barcode)
	if err != nil {
		return err
	}
	return s.DB.Write(ctx, func(tx *db.Tx) error {
		it, err := findItemWithLoan(tx, barcode)
		if err != nil {
			return err
		}
		if it.LoanID != 0 || it.Status != catalog.StatusAvailable {
			return stacks.FieldErrorf("barcode", stacks.ECONFLICT, "%s (%s) is %s, not on the shelf; only an available item can be marked missing.",
				it.Title, it.Barcode, catalog.StatusLabel(it.Status))
		}
		if err := catalog.SetItemStatus(tx, it.ID, catalog.StatusMissing); err != nil {
			return err
		}
		return tx.Audit(actor, "item.missing", "item", it.ID, it.Barcode)
	})
}

// returnLost applies the rule to the bill of a lost loan whose item came back:
// the replacement cost is refunded, voided or left, the processing fee kept or
// refunded. It returns what the desk is told.
func returnLost(tx *db.Tx, actor stacks.Actor, it *itemWithLoan) (string, error) {
	rule, err := ResolveRule(tx, it.BorrowerCategory, it.ItemTypeID, it.LoanBranchID)
	if err != nil {
		return "", err
	}
	rows, err := tx.Query(`SELECT id, kind, amount_cents FROM ledger WHERE loan_id = ? AND kind IN ('lost', 'processing') ORDER BY id`, it.LoanID)
	if err != nil {
		return "", fmt.Errorf("bill of loan %d: %w", it.LoanID, err)
	}
	var rs []patrons.Reversal
	var kept int64
	billed := false
	for rows.Next() {
		var id, amount int64
		var kind string
		if err := rows.Scan(&id, &kind, &amount); err != nil {
			rows.Close()
			return "", err
		}
		billed = true
		mode := rule.LostReturn
		if kind == patrons.KindProcessing {
			mode = LostReturnNone
			if rule.LostReturnFee == LostFeeRefund {
				mode = LostReturnRefund
			}
		}
		if mode == LostReturnNone {
			kept += amount
			continue
		}
		rs = append(rs, patrons.Reversal{ChargeID: id, CreditPaid: mode == LostReturnRefund})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	done, err := patrons.ReverseCharges(tx, actor, it.LoanPatronID, rs, fmt.Sprintf("%s (%s) returned", it.Title, it.Barcode))
	if err != nil {
		return "", err
	}
	refunded, voided := done.CreditedCents, done.VoidedCents
	msg := "Lost item returned"
	if !billed {
		msg += ": it had no bill."
	} else {
		var parts []string
		if refunded > 0 {
			parts = append(parts, formatMoney(refunded)+" refunded to "+it.BorrowerName+"'s account as credit")
		}
		if voided > 0 {
			parts = append(parts, formatMoney(voided)+" unpaid cancelled")
		}
		if done.WaivedCents > 0 {
			parts = append(parts, formatMoney(done.WaivedCents)+" waived stays waived")
		}
		if kept > 0 {
			parts = append(parts, formatMoney(kept)+" still charged")
		}
		if len(parts) == 0 {
			parts = append(parts, "the bill stays as it was")
		}
		msg += ": " + joinParts(parts) + "."
	}
	return msg, tx.Audit(actor, "loan.lost_returned", "loan", it.LoanID, msg)
}

func joinParts(parts []string) string {
	out := ""
	for i, p := range parts {
		switch {
		case i == 0:
		case i == len(parts)-1:
			out += " and "
		default:
			out += ", "
		}
		out += p
	}
	return out
}

// AgeLostResult is what one run of the lost-aging job did.
type AgeLostResult struct {
	Declared int
	Billed   int64
}

// AgeLost is the daily job that declares long-overdue loans lost: a current loan,
// not lost and not claimed returned, due more than its rule's LostAfterDays ago
// (a rule with 0 never does). It works in chunks of chunk loans, one write
// transaction each, and is idempotent: a loan declared lost is not selected again,
// so a repeated or interrupted run bills nobody twice.
func AgeLost(ctx context.Context, d *db.DB, loc *time.Location, chunk int) (AgeLostResult, error) {
	if chunk <= 0 {
		chunk = 200
	}
	var res AgeLostResult
	// The smallest positive LostAfterDays bounds the candidates: a loan due more
	// recently than that is lost under no rule.
	var minDays sql.NullInt64
	if err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT min(lost_after_days) FROM circ_rules WHERE lost_after_days > 0`).Scan(&minDays)
	}); err != nil {
		return res, fmt.Errorf("lost aging: %w", err)
	}
	if !minDays.Valid {
		return res, nil
	}
	var after int64 // loans are visited in id order, each once per run
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var more bool
		err := d.Write(ctx, func(tx *db.Tx) error {
			now := tx.Now()
			cutoff := now.AddDate(0, 0, -int(minDays.Int64))
			rows, err := tx.Query(lostLoanSelect+`
				WHERE l.returned_at IS NULL AND l.lost_at IS NULL AND l.claimed_returned_at IS NULL
				  AND l.due_at < ? AND l.id > ?
				ORDER BY l.id LIMIT ?`, db.FormatTime(cutoff), after, chunk)
			if err != nil {
				return err
			}
			var batch []lostLoan
			for rows.Next() {
				l, err := scanLostLoan(rows)
				if err != nil {
					rows.Close()
					return err
				}
				batch = append(batch, l)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			more = len(batch) == chunk
			rules := map[[3]int64]Rule{}
			for _, l := range batch {
				after = l.LoanID
				key := [3]int64{l.CategoryID, l.ItemTypeID, l.BranchID}
				rule, ok := rules[key]
				if !ok {
					if rule, err = ResolveRule(tx, l.CategoryID, l.ItemTypeID, l.BranchID); err != nil {
						if stacks.ErrorCode(err) == stacks.ECONFLICT {
							continue // no rule: nothing says when it is lost
						}
						return err
					}
					rules[key] = rule
				}
				if rule.LostAfterDays == 0 || !l.Due.Time.Before(now.AddDate(0, 0, -rule.LostAfterDays)) {
					continue
				}
				bill, err := billLost(tx, stacks.System, l, rule, loc, fmt.Sprintf("%d days overdue", rule.LostAfterDays))
				if err != nil {
					return err
				}
				res.Declared++
				res.Billed += bill.Total()
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("lost aging: %w", err)
		}
		if !more {
			return res, nil
		}
	}
}
