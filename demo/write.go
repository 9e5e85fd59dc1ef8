package demo

import (
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks/db"
)

// writeSetup writes what the rest refers to: branches and their calendar, patron
// categories, item types, circulation rules, and the library's name.
func (l *library) writeSetup(tx *db.Tx) error {
	branches := []struct {
		id                  int64
		code, name, address string
	}{
		{branchCEN, "CEN", "Central", "1 Library Square, Centre Town"},
		{branchEAS, "EAS", "Eastside", "48 Marsh Road, Eastfield"},
		{branchWES, "WES", "Westside", "7 Hilltop Parade, Westbrook"},
	}
	for _, b := range branches {
		_, err := tx.Exec(`INSERT INTO branches (id, code, name, address, closed_weekdays, closes_at) VALUES (?, ?, ?, ?, ?, ?)`,
			b.id, b.code, b.name, b.address, l.cal.closedWeekdays[b.id], "20:00")
		if err != nil {
			return fmt.Errorf("insert branch %s: %w", b.code, err)
		}
	}
	days := newBatch(tx, "closed_days", "branch_id", "day", "description")
	for _, c := range l.cal.days {
		var branch any
		if c.branch != 0 {
			branch = c.branch
		}
		if err := days.add(branch, db.FormatDay(c.day), c.description); err != nil {
			return err
		}
	}
	if err := days.flush(); err != nil {
		return err
	}

	_, err := tx.Exec(`INSERT INTO patron_categories (id, code, name, card_months, max_holds) VALUES
		(?, 'ADULT', 'Adult', 12, ?), (?, 'CHILD', 'Child', 12, ?), (?, 'STAFF', 'Staff', 12, ?)`,
		catAdult, maxHolds(catAdult), catChild, maxHolds(catChild), catStaff, maxHolds(catStaff))
	if err != nil {
		return fmt.Errorf("insert patron categories: %w", err)
	}
	_, err = tx.Exec(`INSERT INTO item_types (id, code, name, not_for_loan) VALUES
		(?, 'BOOK', 'Book', 0), (?, 'DVD', 'DVD', 0), (?, 'REF', 'Reference', 1)`,
		typeBook, typeDVD, typeRef)
	if err != nil {
		return fmt.Errorf("insert item types: %w", err)
	}
	rules := newBatch(tx, "circ_rules", "patron_category_id", "item_type_id", "branch_id", "loan_period", "loan_unit",
		"max_loans", "renewals", "fine_cents", "grace_periods", "fine_cap_cents", "hold_pickup_days")
	for _, r := range l.rules {
		if err := rules.add(nullID(r.cat), nullID(r.typ), nullID(r.branch), r.period, "days",
			r.maxLoans, r.renewals, r.fine, 0, r.cap, r.pickupDays); err != nil {
			return err
		}
	}
	if err := rules.flush(); err != nil {
		return err
	}
	_, err = tx.Exec(`INSERT INTO preferences (name, value) VALUES ('library_name', 'Stacks Demo Library')
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`)
	if err != nil {
		return fmt.Errorf("set the library name: %w", err)
	}
	return nil
}

// writeData writes the generated catalogue, patrons, loans, ledger and holds.
func (l *library) writeData(tx *db.Tx) error {
	records := newBatch(tx, "records", "id", "title", "author", "isbn", "publisher", "year", "subjects",
		"control_number", "marc", "created_at", "updated_at")
	for _, r := range l.records {
		created := db.FormatTime(r.created)
		if err := records.add(r.id, r.title, r.author, r.isbn, r.publisher, r.year,
			strings.Join(r.subjects, "\n"), "", "", created, created); err != nil {
			return err
		}
	}
	if err := records.flush(); err != nil {
		return err
	}

	items := newBatch(tx, "items", "id", "barcode", "record_id", "home_branch_id", "current_branch_id", "item_type_id",
		"call_number", "location", "status", "price_cents", "created_at", "updated_at")
	for _, it := range l.items {
		if err := items.add(it.id, it.barcode, it.rec.id, it.branch, it.branch, it.typ, it.rec.callNumber,
			shelvingLocation(it.rec.callNumber), it.status, it.price, db.FormatTime(it.created), db.FormatTime(it.updated)); err != nil {
			return err
		}
	}
	if err := items.flush(); err != nil {
		return err
	}

	patrons := newBatch(tx, "patrons", "id", "card", "surname", "first_name", "email", "phone", "address",
		"category_id", "home_branch_id", "expires_on", "blocked", "block_note", "notes", "created_at")
	for _, p := range l.patrons {
		if err := patrons.add(p.id, p.card, p.surname, p.first, p.email, p.phone, p.address, p.cat, p.branch,
			db.FormatDay(p.expires), boolInt(p.blocked), p.blockNote, p.notes, db.FormatTime(p.created)); err != nil {
			return err
		}
	}
	if err := patrons.flush(); err != nil {
		return err
	}

	loans := newBatch(tx, "loans", "id", "item_id", "patron_id", "branch_id", "staff_id", "issued_at", "due_at",
		"renewals", "returned_at", "return_branch_id")
	for _, ln := range l.loans {
		var returned, returnBranch any
		if !ln.current() {
			returned, returnBranch = db.FormatTime(ln.returned), ln.returnBranch
		}
		if err := loans.add(ln.id, ln.item.id, ln.patron.id, ln.branch, l.deskID, db.FormatTime(ln.issued),
			db.FormatTime(ln.due), ln.renewals, returned, returnBranch); err != nil {
			return err
		}
	}
	if err := loans.flush(); err != nil {
		return err
	}

	ledger := newBatch(tx, "ledger", "id", "patron_id", "kind", "amount_cents", "loan_id", "description",
		"staff_id", "created_at")
	for _, e := range l.ledger {
		var loanID any
		if e.loan != nil {
			loanID = e.loan.id
		}
		if err := ledger.add(e.id, e.patron.id, e.kind, e.amount, loanID, e.desc, l.deskID, db.FormatTime(e.at)); err != nil {
			return err
		}
	}
	if err := ledger.flush(); err != nil {
		return err
	}

	holds := newBatch(tx, "holds", "id", "record_id", "patron_id", "pickup_branch_id", "placed_at", "priority",
		"status", "trapped_item_id", "waiting_since", "pickup_by", "staff_id")
	for _, h := range l.holds {
		var trapped, since, by, staff any
		if h.trapped != nil {
			trapped, since, by = h.trapped.id, db.FormatTime(h.waitingSince), db.FormatTime(h.pickupBy)
		}
		if h.byStaff {
			staff = l.deskID
		}
		if err := holds.add(h.id, h.rec.id, h.patron.id, h.pickup, db.FormatTime(h.placed), h.priority,
			h.status, trapped, since, by, staff); err != nil {
			return err
		}
	}
	if err := holds.flush(); err != nil {
		return err
	}
	return moveIdentities(tx, "records", "items", "patrons", "loans", "ledger", "holds")
}

// moveIdentities moves PostgreSQL's identity sequence of each table past the ids
// the demo gave its rows: an insert that names its id does not move it, and the
// desk's next insert would take an id in use. SQLite needs nothing: it gives
// max(id) + 1.
func moveIdentities(tx *db.Tx, tables ...string) error {
	if tx.Engine() != db.Postgres {
		return nil
	}
	for _, t := range tables {
		if _, err := tx.Exec(`SELECT setval(pg_get_serial_sequence('` + t + `', 'id'), (SELECT coalesce(max(id), 0) + 1 FROM ` + t + `), false)`); err != nil {
			return fmt.Errorf("move the ids of %s on: %w", t, err)
		}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nullID is NULL for a zero id (a rule's wildcard).
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// batch inserts rows into one table many at a time: one multi-row INSERT per
// batchRows rows costs far less than one statement per row.
type batch struct {
	tx    *db.Tx
	table string
	cols  []string
	rows  int
	args  []any
	full  string // the INSERT for a full batch, built once
}

const batchRows = 100

func newBatch(tx *db.Tx, table string, cols ...string) *batch {
	b := &batch{tx: tx, table: table, cols: cols}
	b.full = b.statement(batchRows)
	return b
}

func (b *batch) statement(rows int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(b.cols)), ", ") + ")"
	return "INSERT INTO " + b.table + " (" + strings.Join(b.cols, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
}

// add queues one row, writing the batch when it is full.
func (b *batch) add(values ...any) error {
	if len(values) != len(b.cols) {
		return fmt.Errorf("insert into %s: %d values for %d columns", b.table, len(values), len(b.cols))
	}
	b.args = append(b.args, values...)
	b.rows++
	if b.rows == batchRows {
		return b.flush()
	}
	return nil
}

// flush writes the queued rows.
func (b *batch) flush() error {
	if b.rows == 0 {
		return nil
	}
	query := b.full
	if b.rows != batchRows {
		query = b.statement(b.rows)
	}
	if _, err := b.tx.Exec(query, b.args...); err != nil {
		return fmt.Errorf("insert into %s: %w", b.table, err)
	}
	b.rows, b.args = 0, b.args[:0]
	return nil
}
