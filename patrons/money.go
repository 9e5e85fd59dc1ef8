package patrons

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/staff"
)

// Payment methods a desk takes money by (and gives it back by, for a refund).
const (
	MethodCash  = "cash"
	MethodCard  = "card"
	MethodOther = "other"
)

// PaymentMethods lists the methods in the order the desk offers them.
var PaymentMethods = []string{MethodCash, MethodCard, MethodOther}

// validMethod checks a payment method the desk sent.
func validMethod(m string) error {
	if !slices.Contains(PaymentMethods, m) {
		return stacks.FieldErrorf("method", stacks.EINVALID, "Choose how the money was paid: cash, card or other.")
	}
	return nil
}

// OpenCharge is a charge with what is still owed on it.
type OpenCharge struct {
	LedgerEntry
	// OutstandingCents is what remains to pay on this line: its amount less the
	// payments and waivers allocated to it, its voids, and (oldest charges first)
	// the credit not allocated to any line (payments and waivers made before lines
	// could be chosen, credits).
	OutstandingCents int64
	// PaidCents is the money paid toward the line: the payments (and re-used
	// credits) allocated to it, plus its share of the unallocated money. Only this
	// can be given back as credit when the charge is reversed.
	PaidCents int64
	// WaivedCents is what was forgiven on the line: waivers allocated to it, plus
	// its share of unallocated waivers. It is never given back.
	WaivedCents int64
	// unallocatedPaid is the part of PaidCents that no allocation row names yet
	// (pre-0014 payments, credits applied oldest first).
	unallocatedPaid int64
	// reversedCents is the sum of the voids and credits already reversing it.
	reversedCents int64
}

// OpenCharges returns the patron's charges with something still owed, oldest first,
// and the credit left over after every charge is paid (0 unless the patron is in
// credit). One statement when the patron has charges, two when not.
func OpenCharges(tx *db.Tx, patronID int64) (open []OpenCharge, credit int64, err error) {
	all, credit, err := chargeStates(tx, patronID)
	if err != nil {
		return nil, 0, err
	}
	for _, c := range all {
		if c.OutstandingCents > 0 {
			open = append(open, c)
		}
	}
	return open, credit, nil
}

// chargeStates reads every charge of the patron, oldest first, with what was paid,
// waived, reversed and is still owed on each, and the credit left over.
//
// The pool (credit not tied to a line) has two parts: the forgiven part (waivers
// not allocated to lines, written before waivers were allocated) and the money
// part (payments and credits not allocated, less refunds). Both pay the oldest
// lines first, the forgiven part first on each line, so that an old waiver is
// never counted as money that a reversal could give back.
func chargeStates(tx *db.Tx, patronID int64) (all []OpenCharge, credit int64, err error) {
	const pools = `(SELECT coalesce(sum(CASE
			WHEN y.kind IN ('payment', 'credit') THEN -y.amount_cents
				- coalesce((SELECT sum(a.amount_cents) FROM ledger_allocations a WHERE a.payment_id = y.id), 0)
			WHEN y.kind = 'refund' THEN -y.amount_cents
			ELSE 0 END), 0)
		FROM ledger y WHERE y.patron_id = ?),
		(SELECT coalesce(sum(CASE WHEN y.kind = 'waiver' THEN -y.amount_cents
				- coalesce((SELECT sum(a.amount_cents) FROM ledger_allocations a WHERE a.payment_id = y.id), 0)
			ELSE 0 END), 0)
		FROM ledger y WHERE y.patron_id = ?)`
	rows, err := tx.Query(`SELECT g.id, g.kind, g.amount_cents, coalesce(g.loan_id, 0), g.description,
			coalesce(s.display_name, ''), g.created_at, coalesce(g.payment_method, ''), coalesce(g.reverses_id, 0),
			coalesce((SELECT sum(a.amount_cents) FROM ledger_allocations a JOIN ledger y ON y.id = a.payment_id
				WHERE a.charge_id = g.id AND y.kind <> 'waiver'), 0),
			coalesce((SELECT sum(a.amount_cents) FROM ledger_allocations a JOIN ledger y ON y.id = a.payment_id
				WHERE a.charge_id = g.id AND y.kind = 'waiver'), 0),
			coalesce((SELECT sum(v.amount_cents) FROM ledger v WHERE v.reverses_id = g.id AND v.kind = 'void'), 0),
			coalesce((SELECT sum(v.amount_cents) FROM ledger v WHERE v.reverses_id = g.id), 0),
			`+pools+`
		FROM ledger g LEFT JOIN staff_users s ON s.id = g.staff_id
		WHERE g.patron_id = ? AND g.kind IN ('overdue', 'lost', 'processing', 'fee', 'manual')
		ORDER BY g.id`, patronID, patronID, patronID)
	if err != nil {
		return nil, 0, fmt.Errorf("open charges of patron %d: %w", patronID, err)
	}
	defer rows.Close()
	var money, forgiven int64
	for rows.Next() {
		var c OpenCharge
		var at db.Time
		var voided, reversed int64
		if err := rows.Scan(&c.ID, &c.Kind, &c.AmountCents, &c.LoanID, &c.Description, &c.StaffName, &at,
			&c.PaymentMethod, &c.ReversesID, &c.PaidCents, &c.WaivedCents, &voided, &reversed, &money, &forgiven); err != nil {
			return nil, 0, fmt.Errorf("open charges of patron %d: %w", patronID, err)
		}
		c.CreatedAt = at.Time
		c.reversedCents = -reversed
		c.OutstandingCents = max(0, c.AmountCents-c.PaidCents-c.WaivedCents+voided)
		all = append(all, c)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("open charges of patron %d: %w", patronID, err)
	}
	if len(all) == 0 {
		if err := tx.QueryRow(`SELECT `+pools, patronID, patronID).Scan(&money, &forgiven); err != nil {
			return nil, 0, fmt.Errorf("credit of patron %d: %w", patronID, err)
		}
	}
	if money < 0 { // refunds beyond the money credit: take them from the forgiven part
		forgiven += money
		money = 0
	}
	for i := range all {
		c := &all[i]
		if take := min(max(forgiven, 0), c.OutstandingCents); take > 0 {
			c.OutstandingCents -= take
			c.WaivedCents += take
			forgiven -= take
		}
		if take := min(money, c.OutstandingCents); take > 0 {
			c.OutstandingCents -= take
			c.PaidCents += take
			c.unallocatedPaid = take
			money -= take
		}
	}
	return all, max(0, money+forgiven), nil
}

// PayRequest is a payment taken at the desk.
type PayRequest struct {
	PatronID int64
	Cents    int64
	// Method is cash, card or other.
	Method string
	// ChargeIDs are the lines the patron chose to pay, in order; none pays the
	// oldest first.
	ChargeIDs []int64
	Note      string
}

// PayLines records a payment by a method at the actor's branch and allocates it to
// the chosen lines (or the oldest open lines), each up to what it still owes. It
// refuses more than the chosen lines owe, so the desk never has to give change
// back through the ledger. It returns the payment's id, for the receipt.
func PayLines(tx *db.Tx, actor stacks.Actor, req PayRequest) (int64, error) {
	if err := validMethod(req.Method); err != nil {
		return 0, err
	}
	note := strings.TrimSpace(req.Note)
	if !utf8.ValidString(note) || utf8.RuneCountInString(note) > maxLedger || hasControl(note) {
		return 0, stacks.FieldErrorf("note", stacks.EINVALID, "Write the note on one line, in at most %d characters.", maxLedger)
	}
	if req.Cents <= 0 {
		return 0, stacks.FieldErrorf("amount", stacks.EINVALID, "Enter an amount of more than 0.00.")
	}
	name, balance, err := owing(tx, req.PatronID)
	if err != nil {
		return 0, err
	}
	if balance <= 0 {
		return 0, stacks.FieldErrorf("amount", stacks.EINVALID, "%s owes nothing, so there is nothing to pay.", name)
	}
	open, _, err := OpenCharges(tx, req.PatronID)
	if err != nil {
		return 0, err
	}
	lines, owed := open, int64(0)
	if len(req.ChargeIDs) > 0 {
		if lines, err = chosenLines(open, req.ChargeIDs, name, "amount"); err != nil {
			return 0, err
		}
	}
	for _, c := range lines {
		owed += c.OutstandingCents
	}
	limit := min(owed, balance)
	if len(req.ChargeIDs) == 0 {
		limit = balance
	}
	if req.Cents > limit {
		what := "owes"
		if len(req.ChargeIDs) > 0 {
			what = "owes on the chosen lines"
		}
		return 0, stacks.FieldErrorf("amount", stacks.EINVALID, "%s %s %s; take at most that amount.", name, what, formatCents(limit))
	}
	description := "Payment"
	if note != "" {
		description += ": " + note
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO ledger (patron_id, kind, amount_cents, description, staff_id, created_at, payment_method, branch_id)
		VALUES (?, 'payment', ?, ?, ?, ?, ?, ?) RETURNING id`,
		req.PatronID, -req.Cents, description, nullID(actor.StaffID), db.FormatTime(tx.Now()), req.Method, nullID(actor.BranchID)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("payment for patron %d: %w", req.PatronID, err)
	}
	if err := allocate(tx, id, req.Cents, lines); err != nil {
		return 0, err
	}
	return id, tx.Audit(actor, "patron.pay", "patron", req.PatronID, fmt.Sprintf("payment %d of %s by %s, balance %s -> %s: %s",
		id, formatCents(req.Cents), req.Method, formatCents(balance), formatCents(balance-req.Cents), description))
}

// chosenLines returns the open charges with the ids staff ticked, in their
// order, each once (a line ticked twice, line=X&line=X, counts once). An id that
// is not one of open is an EINVALID error on field, naming the patron.
func chosenLines(open []OpenCharge, ids []int64, name, field string) ([]OpenCharge, error) {
	byID := make(map[int64]OpenCharge, len(open))
	for _, c := range open {
		byID[c.ID] = c
	}
	lines := make([]OpenCharge, 0, len(ids))
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		c, ok := byID[id]
		if !ok {
			return nil, stacks.FieldErrorf(field, stacks.EINVALID, "Line %d is not an open charge of %s; reload the page and choose again.", id, name)
		}
		lines = append(lines, c)
	}
	return lines, nil
}

// WaiveRequest is a waiver made at the desk, of lines staff chose.
type WaiveRequest struct {
	PatronID int64
	// ChargeIDs are the lines to forgive, in order; at least one.
	ChargeIDs []int64
	// Cents is the amount forgiven, spread over the lines in order, each up to
	// what it still owes (less than a line owes: part of it); 0 forgives all the
	// chosen lines owe.
	Cents  int64
	Reason string
}

// WaiveLines forgives what the chosen lines owe (or Cents of it, the lines in
// order) and records it against them (ledger_allocations), so a waiver meant for
// one title never pays another. The actor must be allowed to waive
// (staff.CheckWaive: administrators, and circulation staff with the waive
// permission); a reason is required. It returns the waiver's id and amount.
func WaiveLines(tx *db.Tx, actor stacks.Actor, req WaiveRequest) (id, cents int64, err error) {
	if err := staff.CheckWaive(tx, actor); err != nil {
		return 0, 0, err
	}
	reason, err := waiveReason(req.Reason)
	if err != nil {
		return 0, 0, err
	}
	if len(req.ChargeIDs) == 0 {
		return 0, 0, stacks.FieldErrorf("lines", stacks.EINVALID, "Tick the lines to waive.")
	}
	if req.Cents < 0 {
		return 0, 0, stacks.FieldErrorf("amount", stacks.EINVALID, "Enter an amount of more than 0.00, or leave it empty to waive all the ticked lines owe.")
	}
	name, balance, err := owing(tx, req.PatronID)
	if err != nil {
		return 0, 0, err
	}
	open, _, err := OpenCharges(tx, req.PatronID)
	if err != nil {
		return 0, 0, err
	}
	lines, err := chosenLines(open, req.ChargeIDs, name, "lines")
	if err != nil {
		return 0, 0, err
	}
	var owed int64
	for _, c := range lines {
		owed += c.OutstandingCents
	}
	owed = min(owed, balance)
	if owed <= 0 {
		return 0, 0, stacks.FieldErrorf("lines", stacks.EINVALID, "%s owes nothing on the ticked lines, so there is nothing to waive.", name)
	}
	cents = req.Cents
	if cents == 0 {
		cents = owed
	}
	if cents > owed {
		return 0, 0, stacks.FieldErrorf("amount", stacks.EINVALID, "%s owes %s on the ticked lines; waive at most that amount.", name, formatCents(owed))
	}
	description := "Waived: " + reason
	err = tx.QueryRow(`INSERT INTO ledger (patron_id, kind, amount_cents, description, staff_id, created_at)
		VALUES (?, 'waiver', ?, ?, ?, ?) RETURNING id`,
		req.PatronID, -cents, description, nullID(actor.StaffID), db.FormatTime(tx.Now())).Scan(&id)
	if err != nil {
		return 0, 0, fmt.Errorf("waiver for patron %d: %w", req.PatronID, err)
	}
	if err := allocate(tx, id, cents, lines); err != nil {
		return 0, 0, err
	}
	ids := make([]string, len(lines))
	for i, c := range lines {
		ids[i] = fmt.Sprint(c.ID)
	}
	return id, cents, tx.Audit(actor, "patron.waive", "patron", req.PatronID, fmt.Sprintf("waiver %d of %s on lines %s, balance %s -> %s: %s",
		id, formatCents(cents), strings.Join(ids, ","), formatCents(balance), formatCents(balance-cents), description))
}

// allocate ties cents of payment (or waiver) id to lines, in order, each up to
// what it still owes: one ledger_allocations row per line it pays.
func allocate(tx *db.Tx, id, cents int64, lines []OpenCharge) error {
	left := cents
	for _, c := range lines {
		take := min(left, c.OutstandingCents)
		if take <= 0 {
			continue
		}
		if _, err := tx.Exec(`INSERT INTO ledger_allocations (payment_id, charge_id, amount_cents) VALUES (?, ?, ?)`,
			id, c.ID, take); err != nil {
			return fmt.Errorf("allocate ledger row %d: %w", id, err)
		}
		left -= take
	}
	return nil
}

// Refund hands back cents of a patron's credit by a method at the actor's branch
// (a positive line: the balance moves back towards zero). It refuses more than the
// credit. It returns the refund's id, for the receipt.
func Refund(tx *db.Tx, actor stacks.Actor, patronID int64, cents int64, method, note string) (int64, error) {
	if err := validMethod(method); err != nil {
		return 0, err
	}
	note = strings.TrimSpace(note)
	if !utf8.ValidString(note) || utf8.RuneCountInString(note) > maxLedger || hasControl(note) {
		return 0, stacks.FieldErrorf("note", stacks.EINVALID, "Write the note on one line, in at most %d characters.", maxLedger)
	}
	if cents <= 0 {
		return 0, stacks.FieldErrorf("amount", stacks.EINVALID, "Enter an amount of more than 0.00.")
	}
	name, balance, err := owing(tx, patronID)
	if err != nil {
		return 0, err
	}
	if balance >= 0 {
		return 0, stacks.FieldErrorf("amount", stacks.EINVALID, "%s has no credit, so there is nothing to refund.", name)
	}
	if cents > -balance {
		return 0, stacks.FieldErrorf("amount", stacks.EINVALID, "%s has %s in credit; refund at most that amount.", name, formatCents(-balance))
	}
	description := "Refund"
	if note != "" {
		description += ": " + note
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO ledger (patron_id, kind, amount_cents, description, staff_id, created_at, payment_method, branch_id)
		VALUES (?, 'refund', ?, ?, ?, ?, ?, ?) RETURNING id`,
		patronID, cents, description, nullID(actor.StaffID), db.FormatTime(tx.Now()), method, nullID(actor.BranchID)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("refund for patron %d: %w", patronID, err)
	}
	return id, tx.Audit(actor, "patron.refund", "patron", patronID, fmt.Sprintf("refund %d of %s by %s, balance %s -> %s",
		id, formatCents(cents), method, formatCents(balance), formatCents(balance+cents)))
}

// Reversal asks to reverse one charge: void its unpaid part and, if CreditPaid,
// give the money paid toward it back as credit.
type Reversal struct {
	ChargeID   int64
	CreditPaid bool
}

// Reversed is what ReverseCharges did: the unpaid parts cancelled (voids) and the
// paid parts given back as credit.
type Reversed struct {
	VoidedCents, CreditedCents int64
	// WaivedCents is what had been waived on the reversed charges: it stays
	// waived, neither voided again nor credited.
	WaivedCents int64
}

// ReverseCharges reverses charges of one patron, as a lost item's return does:
// the unpaid part of each is voided and, if CreditPaid, the money paid toward it
// (payments allocated to it, and its share of unallocated payments, oldest lines
// first) is given back as credit. What was waived is neither voided again nor
// credited: a waiver is not money the patron paid, so it never becomes credit
// that could be refunded in cash. Before a credit is written, the unallocated
// money it gives back is allocated to the line, so every credit is traceable to
// the payments of that line (`stacks check`: ledger-credit-over-paid).
//
// What each charge owes is read once, before any reversal is written, so a credit
// given back for one line does not count as paying the next. A charge already
// reversed is not reversed again. No audit entry: the caller audits.
func ReverseCharges(tx *db.Tx, actor stacks.Actor, patronID int64, rs []Reversal, description string) (Reversed, error) {
	var out Reversed
	if len(rs) == 0 {
		return out, nil
	}
	all, _, err := chargeStates(tx, patronID)
	if err != nil {
		return out, err
	}
	byID := make(map[int64]OpenCharge, len(all))
	for _, c := range all {
		byID[c.ID] = c
	}
	var sources []moneySource // read when a credit first needs them
	now := db.FormatTime(tx.Now())
	for _, r := range rs {
		c, ok := byID[r.ChargeID]
		if !ok {
			var owner sql.NullInt64
			err := tx.QueryRow(`SELECT patron_id FROM ledger WHERE id = ?`, r.ChargeID).Scan(&owner)
			if errors.Is(err, sql.ErrNoRows) {
				return out, stacks.Errorf(stacks.ENOTFOUND, "There is no ledger line %d.", r.ChargeID)
			} else if err != nil {
				return out, fmt.Errorf("reverse line %d: %w", r.ChargeID, err)
			}
			return out, stacks.Errorf(stacks.EINVALID, "Ledger line %d is not a charge of patron %d that can be reversed.", r.ChargeID, patronID)
		}
		if c.reversedCents > 0 {
			continue
		}
		void := min(c.OutstandingCents, c.AmountCents)
		var credit int64
		if r.CreditPaid {
			credit = min(c.PaidCents, c.AmountCents-void)
		}
		if unallocated := min(credit, c.unallocatedPaid); unallocated > 0 {
			if sources == nil {
				if sources, err = unallocatedMoney(tx, patronID); err != nil {
					return out, err
				}
			}
			if err := allocateFrom(tx, sources, c.ID, unallocated); err != nil {
				return out, err
			}
		}
		for _, line := range []struct {
			kind  string
			cents int64
			what  string
		}{{KindVoid, void, "Voided"}, {KindCredit, credit, "Credited"}} {
			if line.cents <= 0 {
				continue
			}
			if _, err := tx.Exec(`INSERT INTO ledger (patron_id, kind, amount_cents, description, staff_id, created_at, reverses_id, loan_id)
				SELECT patron_id, ?, ?, ?, ?, ?, id, loan_id FROM ledger WHERE id = ?`,
				line.kind, -line.cents, line.what+": "+description, nullID(actor.StaffID), now, r.ChargeID); err != nil {
				return out, fmt.Errorf("reverse line %d: %w", r.ChargeID, err)
			}
		}
		out.VoidedCents += void
		out.CreditedCents += credit
		out.WaivedCents += c.WaivedCents
	}
	return out, nil
}

// moneySource is a payment or credit with money not yet allocated to a line.
type moneySource struct {
	ID, LeftCents int64
}

// unallocatedMoney lists the patron's payments and credits with an unallocated
// part, oldest first.
func unallocatedMoney(tx *db.Tx, patronID int64) ([]moneySource, error) {
	rows, err := tx.Query(`SELECT y.id, -y.amount_cents - coalesce((SELECT sum(a.amount_cents) FROM ledger_allocations a WHERE a.payment_id = y.id), 0)
		FROM ledger y WHERE y.patron_id = ? AND y.kind IN ('payment', 'credit') ORDER BY y.id`, patronID)
	if err != nil {
		return nil, fmt.Errorf("unallocated payments of patron %d: %w", patronID, err)
	}
	defer rows.Close()
	out := []moneySource{}
	for rows.Next() {
		var m moneySource
		if err := rows.Scan(&m.ID, &m.LeftCents); err != nil {
			return nil, err
		}
		if m.LeftCents > 0 {
			out = append(out, m)
		}
	}
	return out, rows.Err()
}

// allocateFrom ties cents of the oldest unallocated money in sources to charge,
// and takes it off sources.
func allocateFrom(tx *db.Tx, sources []moneySource, charge, cents int64) error {
	for i := range sources {
		take := min(cents, sources[i].LeftCents)
		if take <= 0 {
			continue
		}
		if _, err := tx.Exec(`INSERT INTO ledger_allocations (payment_id, charge_id, amount_cents) VALUES (?, ?, ?)
			ON CONFLICT (payment_id, charge_id) DO UPDATE SET amount_cents = ledger_allocations.amount_cents + excluded.amount_cents`,
			sources[i].ID, charge, take); err != nil {
			return fmt.Errorf("allocate ledger row %d: %w", sources[i].ID, err)
		}
		sources[i].LeftCents -= take
		cents -= take
		if cents == 0 {
			return nil
		}
	}
	return fmt.Errorf("allocate %d cents to charge %d: the patron's unallocated payments do not cover it", cents, charge)
}

// ChargeType is a configured kind of manual charge.
type ChargeType struct {
	Code         string
	Description  string
	DefaultCents int64
}

// ChargeTypes lists the configured manual charge types by code.
func ChargeTypes(tx *db.Tx) ([]ChargeType, error) {
	rows, err := tx.Query(`SELECT code, description, default_cents FROM charge_types ORDER BY code`)
	if err != nil {
		return nil, fmt.Errorf("charge types: %w", err)
	}
	defer rows.Close()
	var out []ChargeType
	for rows.Next() {
		var t ChargeType
		if err := rows.Scan(&t.Code, &t.Description, &t.DefaultCents); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// SaveChargeType creates or replaces a manual charge type.
func SaveChargeType(tx *db.Tx, actor stacks.Actor, t ChargeType) error {
	t.Code = strings.ToUpper(strings.TrimSpace(t.Code))
	t.Description = strings.TrimSpace(t.Description)
	switch {
	case t.Code == "" || len(t.Code) > 20 || strings.ContainsFunc(t.Code, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') }):
		return stacks.FieldErrorf("code", stacks.EINVALID, "The code is 1 to 20 letters, digits or _, like CARD.")
	case t.Description == "" || utf8.RuneCountInString(t.Description) > 200 || hasControl(t.Description):
		return stacks.FieldErrorf("description", stacks.EINVALID, "Describe the charge in 1 to 200 characters.")
	case t.DefaultCents < 0:
		return stacks.FieldErrorf("default", stacks.EINVALID, "The default amount cannot be negative.")
	}
	if _, err := tx.Exec(`INSERT INTO charge_types (code, description, default_cents) VALUES (?, ?, ?)
		ON CONFLICT (code) DO UPDATE SET description = excluded.description, default_cents = excluded.default_cents`,
		t.Code, t.Description, t.DefaultCents); err != nil {
		return fmt.Errorf("save charge type: %w", err)
	}
	return tx.Audit(actor, "charge_type.save", "charge_type", 0, fmt.Sprintf("%s %q %s", t.Code, t.Description, formatCents(t.DefaultCents)))
}

// ChargeManual charges the patron a configured type of charge: cents, or the
// type's default when cents is 0. It returns the new line's id.
func ChargeManual(tx *db.Tx, actor stacks.Actor, patronID int64, code string, cents int64, note string) (int64, error) {
	var t ChargeType
	err := tx.QueryRow(`SELECT code, description, default_cents FROM charge_types WHERE code = ?`, code).Scan(&t.Code, &t.Description, &t.DefaultCents)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, stacks.FieldErrorf("type", stacks.EINVALID, "Choose one of the configured charge types.")
	} else if err != nil {
		return 0, fmt.Errorf("charge type %q: %w", code, err)
	}
	if cents == 0 {
		cents = t.DefaultCents
	}
	if cents <= 0 {
		return 0, stacks.FieldErrorf("amount", stacks.EINVALID, "%s has no default amount; enter the amount, like 2.00.", t.Description)
	}
	note = strings.TrimSpace(note)
	if !utf8.ValidString(note) || utf8.RuneCountInString(note) > maxLedger || hasControl(note) {
		return 0, stacks.FieldErrorf("note", stacks.EINVALID, "Write the note on one line, in at most %d characters.", maxLedger)
	}
	description := t.Description
	if note != "" {
		description += ": " + note
	}
	if _, _, err := owing(tx, patronID); err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRow(`INSERT INTO ledger (patron_id, kind, amount_cents, description, staff_id, created_at, charge_type, branch_id)
		VALUES (?, 'manual', ?, ?, ?, ?, ?, ?) RETURNING id`,
		patronID, cents, description, nullID(actor.StaffID), db.FormatTime(tx.Now()), t.Code, nullID(actor.BranchID)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("charge patron %d: %w", patronID, err)
	}
	return id, tx.Audit(actor, "patron.charge", "patron", patronID, fmt.Sprintf("%s %s: %s", t.Code, formatCents(cents), description))
}

// Receipt is a payment or refund as the printed receipt shows it.
type Receipt struct {
	ID         int64
	Kind       string // payment or refund
	Cents      int64  // positive
	Method     string
	StaffName  string
	BranchName string
	PatronName string
	PatronCard string
	At         time.Time
	Note       string
	// Lines are the charges the payment paid, with the amount of each.
	Lines []ReceiptLine
	// BalanceCents is the patron's balance just after this payment or refund (the
	// rows up to its id), so a reprinted receipt says what it said then.
	BalanceCents int64
}

// ReceiptLine is one charge a payment paid.
type ReceiptLine struct {
	Description string
	PaidCents   int64
}

// FindReceipt reads a payment or refund for its receipt, in two statements.
func FindReceipt(tx *db.Tx, id int64) (Receipt, error) {
	var r Receipt
	var at db.Time
	var first, surname, card sql.NullString
	err := tx.QueryRow(`SELECT g.id, g.kind, abs(g.amount_cents), coalesce(g.payment_method, ''), coalesce(s.display_name, ''),
			coalesce(b.name, ''), p.first_name, p.surname, p.card, g.created_at, g.description,
			coalesce((SELECT sum(amount_cents) FROM ledger WHERE patron_id = g.patron_id AND id <= g.id), 0)
		FROM ledger g LEFT JOIN staff_users s ON s.id = g.staff_id LEFT JOIN branches b ON b.id = g.branch_id
		LEFT JOIN patrons p ON p.id = g.patron_id
		WHERE g.id = ? AND g.kind IN ('payment', 'refund')`, id).Scan(&r.ID, &r.Kind, &r.Cents, &r.Method, &r.StaffName,
		&r.BranchName, &first, &surname, &card, &at, &r.Note, &r.BalanceCents)
	if errors.Is(err, sql.ErrNoRows) {
		return Receipt{}, stacks.Errorf(stacks.ENOTFOUND, "There is no payment or refund %d.", id)
	} else if err != nil {
		return Receipt{}, fmt.Errorf("receipt %d: %w", id, err)
	}
	r.At = at.Time
	if first.Valid {
		p := Patron{FirstName: first.String, Surname: surname.String}
		r.PatronName = p.Name()
		r.PatronCard = card.String
	}
	rows, err := tx.Query(`SELECT c.description, a.amount_cents FROM ledger_allocations a JOIN ledger c ON c.id = a.charge_id
		WHERE a.payment_id = ? ORDER BY c.id`, id)
	if err != nil {
		return Receipt{}, fmt.Errorf("receipt %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var l ReceiptLine
		if err := rows.Scan(&l.Description, &l.PaidCents); err != nil {
			return Receipt{}, err
		}
		r.Lines = append(r.Lines, l)
	}
	return r, rows.Err()
}

// CashUp is what one desk (a branch) took and paid out on one library day.
type CashUp struct {
	BranchID int64
	Day      string
	// Totals per method: taken (payments), paid out (refunds), net.
	Totals []MethodTotal
	// Entries are the payments and refunds, in order.
	Entries []CashUpEntry
	// NetCents is taken less paid out, every method.
	NetCents int64
}

// MethodTotal is one method's line of the cash-up.
type MethodTotal struct {
	Method                   string
	TakenCents, PaidOutCents int64
	Count                    int
}

// CashUpEntry is one payment or refund in the cash-up.
type CashUpEntry struct {
	ID         int64
	Kind       string
	Cents      int64 // positive
	Method     string
	StaffName  string
	PatronCard string // empty once the patron was purged
	At         time.Time
}

// FindCashUp reads the payments and refunds taken at branchID on day (a library
// day, YYYY-MM-DD, in loc), in one statement. It reads no patron beyond the card,
// so the totals of a day never change when a patron is purged.
func FindCashUp(tx *db.Tx, branchID int64, day string, loc *time.Location) (CashUp, error) {
	if loc == nil {
		loc = time.UTC
	}
	d, err := time.ParseInLocation(db.DayFormat, day, loc)
	if err != nil {
		return CashUp{}, stacks.FieldErrorf("day", stacks.EINVALID, "Enter the day as YYYY-MM-DD.")
	}
	from, to := d, d.AddDate(0, 0, 1)
	rows, err := tx.Query(`SELECT g.id, g.kind, abs(g.amount_cents), g.payment_method, coalesce(s.display_name, ''),
			coalesce(p.card, ''), g.created_at
		FROM ledger g LEFT JOIN staff_users s ON s.id = g.staff_id LEFT JOIN patrons p ON p.id = g.patron_id
		WHERE g.created_at >= ? AND g.created_at < ? AND g.payment_method IS NOT NULL AND g.branch_id = ?
		ORDER BY g.created_at, g.id`, db.FormatTime(from), db.FormatTime(to), branchID)
	if err != nil {
		return CashUp{}, fmt.Errorf("cash-up: %w", err)
	}
	defer rows.Close()
	c := CashUp{BranchID: branchID, Day: day}
	totals := map[string]*MethodTotal{}
	for _, m := range PaymentMethods {
		totals[m] = &MethodTotal{Method: m}
	}
	for rows.Next() {
		var e CashUpEntry
		var at db.Time
		if err := rows.Scan(&e.ID, &e.Kind, &e.Cents, &e.Method, &e.StaffName, &e.PatronCard, &at); err != nil {
			return CashUp{}, err
		}
		e.At = at.Time
		t := totals[e.Method]
		t.Count++
		if e.Kind == KindRefund {
			t.PaidOutCents += e.Cents
			c.NetCents -= e.Cents
		} else {
			t.TakenCents += e.Cents
			c.NetCents += e.Cents
		}
		c.Entries = append(c.Entries, e)
	}
	for _, m := range PaymentMethods {
		c.Totals = append(c.Totals, *totals[m])
	}
	return c, rows.Err()
}
