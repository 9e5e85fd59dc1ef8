// Package circulation is the desk: check out, check in, renew, the circulation
// rules that govern them, and the overdue fines they charge. Every operation is one
// write transaction; the holds package is called inside it, so a checkin that fills
// a hold commits both or neither.
package circulation

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Rule is one row of the circulation rules: for a patron category, an item type and
// a branch (each possibly "any"), how long a loan runs and what lateness costs.
type Rule struct {
	ID int64
	// Zero means "any" (a wildcard).
	PatronCategoryID int64
	ItemTypeID       int64
	BranchID         int64
	// Names for display; empty for a wildcard.
	PatronCategoryName string
	ItemTypeName       string
	BranchName         string

	LoanPeriod int
	LoanUnit   string // "days" or "hours"
	MaxLoans   int
	Renewals   int
	// FineCents is charged per late unit (day or hour), after the grace periods.
	FineCents    int64
	GracePeriods int
	// FineCapCents caps the fine for one loan; 0 means no cap.
	FineCapCents   int64
	HoldPickupDays int

	// LostAfterDays is how many days past due the daily job declares a loan lost;
	// 0 means never.
	LostAfterDays int
	// ProcessingFeeCents is billed with a lost item's replacement cost.
	ProcessingFeeCents int64
	// LostReturn is what the return of a lost item does to its replacement cost:
	// LostReturnRefund, LostReturnVoid or LostReturnNone.
	LostReturn string
	// LostReturnFee is what it does to the processing fee: LostFeeKept or
	// LostFeeRefund.
	LostReturnFee string
	// LostForgiveFine forgives the overdue fine accrued until a loan is declared
	// lost; otherwise it is charged at the declaration (Koha's WhenLostForgiveFine).
	LostForgiveFine bool
}

// What the return of a lost item does to its bill (Rule.LostReturn and
// Rule.LostReturnFee).
const (
	// LostReturnRefund voids what is unpaid and credits what was paid.
	LostReturnRefund = "refund"
	// LostReturnVoid voids what is unpaid; what was paid is kept.
	LostReturnVoid = "void"
	// LostReturnNone leaves the bill as it is.
	LostReturnNone = "none"
	// LostFeeKept keeps the processing fee.
	LostFeeKept = "kept"
	// LostFeeRefund treats the processing fee as LostReturnRefund does.
	LostFeeRefund = "refund"
)

// Specificity orders matching rules: more named fields first; among equals a named
// branch beats a named patron category, which beats a named item type (Koha's
// order of precedence).
func (r Rule) Specificity() int {
	s := 0
	if r.BranchID != 0 {
		s += 8 + 4
	}
	if r.PatronCategoryID != 0 {
		s += 8 + 2
	}
	if r.ItemTypeID != 0 {
		s += 8 + 1
	}
	return s
}

// Fine returns the fine for a return late by units: nothing within the grace
// periods, else units times the rate, capped.
func (r Rule) Fine(units int) int64 {
	if units <= 0 || units <= r.GracePeriods {
		return 0
	}
	f := int64(units) * r.FineCents
	if r.FineCapCents > 0 && f > r.FineCapCents {
		f = r.FineCapCents
	}
	return f
}

// Validate checks a rule an administrator entered.
func (r *Rule) Validate() error {
	switch {
	case r.LoanUnit != "days" && r.LoanUnit != "hours":
		return stacks.FieldErrorf("loan_unit", stacks.EINVALID, "The loan unit must be days or hours.")
	case r.LoanPeriod < 0 || r.LoanPeriod > 3650:
		return stacks.FieldErrorf("loan_period", stacks.EINVALID, "The loan period must be between 0 and 3650.")
	case r.MaxLoans < 0 || r.MaxLoans > 10000:
		return stacks.FieldErrorf("max_loans", stacks.EINVALID, "Maximum loans must be between 0 and 10000.")
	case r.Renewals < 0 || r.Renewals > 1000:
		return stacks.FieldErrorf("renewals", stacks.EINVALID, "Renewals must be between 0 and 1000.")
	case r.FineCents < 0:
		return stacks.FieldErrorf("fine", stacks.EINVALID, "The fine cannot be negative.")
	case r.GracePeriods < 0 || r.GracePeriods > 1000:
		return stacks.FieldErrorf("grace_periods", stacks.EINVALID, "The grace period must be between 0 and 1000.")
	case r.FineCapCents < 0:
		return stacks.FieldErrorf("fine_cap", stacks.EINVALID, "The fine cap cannot be negative (0 means no cap).")
	case r.HoldPickupDays < 1 || r.HoldPickupDays > 365:
		return stacks.FieldErrorf("hold_pickup_days", stacks.EINVALID, "Hold pickup days must be between 1 and 365.")
	case r.LostAfterDays < 0 || r.LostAfterDays > 3650:
		return stacks.FieldErrorf("lost_after_days", stacks.EINVALID, "Days overdue until lost must be between 0 (never) and 3650.")
	case r.ProcessingFeeCents < 0:
		return stacks.FieldErrorf("processing_fee", stacks.EINVALID, "The processing fee cannot be negative.")
	}
	if r.LostReturn == "" {
		r.LostReturn = LostReturnRefund
	}
	if r.LostReturnFee == "" {
		r.LostReturnFee = LostFeeKept
	}
	if r.LostReturn != LostReturnRefund && r.LostReturn != LostReturnVoid && r.LostReturn != LostReturnNone {
		return stacks.FieldErrorf("lost_return", stacks.EINVALID, "Choose what a lost item's return does: refund, void or nothing.")
	}
	if r.LostReturnFee != LostFeeKept && r.LostReturnFee != LostFeeRefund {
		return stacks.FieldErrorf("lost_return_fee", stacks.EINVALID, "Choose whether the processing fee is kept or refunded.")
	}
	return nil
}

const ruleColumns = `r.id, coalesce(r.patron_category_id, 0), coalesce(r.item_type_id, 0), coalesce(r.branch_id, 0),
	coalesce(pc.name, ''), coalesce(it.name, ''), coalesce(b.name, ''),
	r.loan_period, r.loan_unit, r.max_loans, r.renewals, r.fine_cents, r.grace_periods, r.fine_cap_cents, r.hold_pickup_days,
	r.lost_after_days, r.processing_fee_cents, r.lost_return, r.lost_return_fee, r.lost_forgive_fine`

const ruleFrom = ` FROM circ_rules r
	LEFT JOIN patron_categories pc ON pc.id = r.patron_category_id
	LEFT JOIN item_types it ON it.id = r.item_type_id
	LEFT JOIN branches b ON b.id = r.branch_id`

func scanRule(row interface{ Scan(...any) error }) (Rule, error) {
	var r Rule
	err := row.Scan(&r.ID, &r.PatronCategoryID, &r.ItemTypeID, &r.BranchID,
		&r.PatronCategoryName, &r.ItemTypeName, &r.BranchName,
		&r.LoanPeriod, &r.LoanUnit, &r.MaxLoans, &r.Renewals, &r.FineCents, &r.GracePeriods, &r.FineCapCents, &r.HoldPickupDays,
		&r.LostAfterDays, &r.ProcessingFeeCents, &r.LostReturn, &r.LostReturnFee, &r.LostForgiveFine)
	return r, err
}

// ResolveRule returns the most specific rule matching a patron category, an item
// type and a branch, in one query.
func ResolveRule(tx *db.Tx, categoryID, itemTypeID, branchID int64) (Rule, error) {
	r, err := scanRule(tx.QueryRow(`SELECT `+ruleColumns+ruleFrom+`
		WHERE (r.patron_category_id = ? OR r.patron_category_id IS NULL)
		  AND (r.item_type_id = ? OR r.item_type_id IS NULL)
		  AND (r.branch_id = ? OR r.branch_id IS NULL)
		ORDER BY (CASE WHEN r.branch_id IS NULL THEN 0 ELSE 12 END)
		       + (CASE WHEN r.patron_category_id IS NULL THEN 0 ELSE 10 END)
		       + (CASE WHEN r.item_type_id IS NULL THEN 0 ELSE 9 END) DESC
		LIMIT 1`, categoryID, itemTypeID, branchID))
	if errors.Is(err, sql.ErrNoRows) {
		return Rule{}, errNoRule()
	} else if err != nil {
		return Rule{}, fmt.Errorf("resolve circulation rule: %w", err)
	}
	return r, nil
}

func errNoRule() error {
	return stacks.Errorf(stacks.ECONFLICT, "No circulation rule covers this patron category and item type. An administrator must add one (a rule with every field \"any\" covers everything).")
}

// listRules returns every rule, most specific first.
func listRules(tx *db.Tx) ([]Rule, error) {
	rows, err := tx.Query(`SELECT ` + ruleColumns + ruleFrom + `
		ORDER BY coalesce(b.name, ''), coalesce(pc.name, ''), coalesce(it.name, '')`)
	if err != nil {
		return nil, fmt.Errorf("list circulation rules: %w", err)
	}
	defer rows.Close()
	var rs []Rule
	for rows.Next() {
		r, err := scanRule(rows)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, rows.Err()
}

// findRule returns the rule with the given id.
func findRule(tx *db.Tx, id int64) (Rule, error) {
	r, err := scanRule(tx.QueryRow(`SELECT `+ruleColumns+ruleFrom+` WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Rule{}, stacks.Errorf(stacks.ENOTFOUND, "There is no circulation rule %d.", id)
	}
	return r, err
}

func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// SaveRule creates (ID 0) or updates a rule. Two rules for the same scope conflict.
func SaveRule(tx *db.Tx, actor stacks.Actor, r Rule) (Rule, error) {
	if err := r.Validate(); err != nil {
		return Rule{}, err
	}
	var err error
	if r.ID == 0 {
		err = tx.QueryRow(`INSERT INTO circ_rules (patron_category_id, item_type_id, branch_id, loan_period, loan_unit,
			max_loans, renewals, fine_cents, grace_periods, fine_cap_cents, hold_pickup_days,
			lost_after_days, processing_fee_cents, lost_return, lost_return_fee, lost_forgive_fine)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			nullID(r.PatronCategoryID), nullID(r.ItemTypeID), nullID(r.BranchID), r.LoanPeriod, r.LoanUnit,
			r.MaxLoans, r.Renewals, r.FineCents, r.GracePeriods, r.FineCapCents, r.HoldPickupDays,
			r.LostAfterDays, r.ProcessingFeeCents, r.LostReturn, r.LostReturnFee, sqlBool(r.LostForgiveFine)).Scan(&r.ID)
	} else {
		_, err = tx.Exec(`UPDATE circ_rules SET patron_category_id = ?, item_type_id = ?, branch_id = ?, loan_period = ?,
			loan_unit = ?, max_loans = ?, renewals = ?, fine_cents = ?, grace_periods = ?, fine_cap_cents = ?, hold_pickup_days = ?,
			lost_after_days = ?, processing_fee_cents = ?, lost_return = ?, lost_return_fee = ?, lost_forgive_fine = ?
			WHERE id = ?`,
			nullID(r.PatronCategoryID), nullID(r.ItemTypeID), nullID(r.BranchID), r.LoanPeriod, r.LoanUnit,
			r.MaxLoans, r.Renewals, r.FineCents, r.GracePeriods, r.FineCapCents, r.HoldPickupDays,
			r.LostAfterDays, r.ProcessingFeeCents, r.LostReturn, r.LostReturnFee, sqlBool(r.LostForgiveFine), r.ID)
	}
	if db.IsUniqueViolation(err) {
		return Rule{}, stacks.Errorf(stacks.ECONFLICT, "A rule for this patron category, item type and branch already exists; edit that one instead.")
	} else if err != nil {
		return Rule{}, fmt.Errorf("save circulation rule: %w", err)
	}
	if err := tx.Audit(actor, "rule.save", "circ_rule", r.ID, fmt.Sprintf("%+v", r)); err != nil {
		return Rule{}, err
	}
	return findRule(tx, r.ID)
}

// deleteRule removes a rule.
func deleteRule(tx *db.Tx, actor stacks.Actor, id int64) error {
	res, err := tx.Exec(`DELETE FROM circ_rules WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete circulation rule: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no circulation rule %d.", id)
	}
	return tx.Audit(actor, "rule.delete", "circ_rule", id, "")
}

// sqlBool is b as the 0 or 1 the flag columns hold: SQLite takes a Go bool for
// an integer column, but pgx does not encode one into PostgreSQL's bigint.
func sqlBool(b bool) int {
	if b {
		return 1
	}
	return 0
}
