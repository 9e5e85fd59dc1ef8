package privacy

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// Export is everything the library holds about one patron (the GDPR right of
// access), as rows of each table with their column names. Columns are read with
// SELECT *, so a column a later migration adds is exported without a change
// here; only the PIN's hash is left out.
type Export struct {
	ExportedAt        string `json:"exported_at"`
	Patron            Row    `json:"patron"`
	Loans             []Row  `json:"loans"`
	Holds             []Row  `json:"holds"`
	Ledger            []Row  `json:"ledger"`
	Notices           []Row  `json:"notices"`
	NoticeItems       []Row  `json:"notice_items"`
	NoticePreferences []Row  `json:"notice_preferences"`
	Audit             []Row  `json:"audit"`
}

// Row is one row, column name to value.
type Row map[string]any

// exportOmitted are the patron's columns an export leaves out: secrets, not data
// about the person.
var exportOmitted = map[string]bool{"pin_hash": true}

// ExportPatron reads patron id's data in tx and records the export in the audit
// log (by id: the entry names no one). Loans anonymised already are not theirs
// any more, and not in it.
func ExportPatron(tx *db.Tx, actor stacks.Actor, id int64) (*Export, error) {
	e, err := readExport(tx, id)
	if err != nil {
		return nil, err
	}
	if err := auditExport(tx, actor, id); err != nil {
		return nil, err
	}
	return e, nil
}

// auditExport records the export of patron id's data.
func auditExport(tx *db.Tx, actor stacks.Actor, id int64) error {
	return tx.Audit(actor, "patron.export", "patron", id, "data exported (GDPR access)")
}

// readExport reads patron id's data in tx.
func readExport(tx *db.Tx, id int64) (*Export, error) {
	patron, err := rows(tx, `SELECT * FROM patrons WHERE id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("export patron: %w", err)
	}
	if len(patron) == 0 {
		return nil, notFound(sql.ErrNoRows, id)
	}
	for k := range exportOmitted {
		delete(patron[0], k)
	}
	e := &Export{ExportedAt: db.FormatTime(tx.Now()), Patron: patron[0]}
	for _, s := range []struct {
		dst *[]Row
		q   string
	}{
		{&e.Loans, `SELECT l.*, i.barcode AS item_barcode, r.title AS title, r.author AS author
			FROM loans l JOIN items i ON i.id = l.item_id JOIN records r ON r.id = i.record_id
			WHERE l.patron_id = ? ORDER BY l.id`},
		{&e.Holds, `SELECT h.*, r.title AS title FROM holds h JOIN records r ON r.id = h.record_id WHERE h.patron_id = ? ORDER BY h.id`},
		{&e.Ledger, `SELECT * FROM ledger WHERE patron_id = ? ORDER BY id`},
		{&e.Notices, `SELECT * FROM notice_messages WHERE patron_id = ? ORDER BY id`},
		{&e.NoticeItems, `SELECT * FROM notice_items WHERE patron_id = ? ORDER BY id`},
		{&e.NoticePreferences, `SELECT * FROM notice_preferences WHERE patron_id = ? ORDER BY kind`},
		{&e.Audit, `SELECT * FROM audit_log WHERE (object_type = 'patron' AND object_id = ?1)
			OR (object_type = 'hold' AND object_id IN (SELECT h.id FROM holds h WHERE h.patron_id = ?1)) ORDER BY id`},
	} {
		if *s.dst, err = rows(tx, s.q, id); err != nil {
			return nil, fmt.Errorf("export patron: %w", err)
		}
	}
	return e, nil
}

// ExportByCard is ExportPatron for the patron with card.
func ExportByCard(tx *db.Tx, actor stacks.Actor, card string) (*Export, error) {
	p, err := patrons.FindByCard(tx, card)
	if err != nil {
		return nil, err
	}
	return ExportPatron(tx, actor, p.ID)
}

// rows reads every row of q as column name to value; text comes back as
// strings, never bytes, so that JSON shows it as text.
func rows(tx *db.Tx, q string, args ...any) ([]Row, error) {
	rs, err := tx.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	out := []Row{}
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := Row{}
		for i, c := range cols {
			if b, ok := vals[i].([]byte); ok {
				vals[i] = string(b)
			}
			r[strings.ToLower(c)] = vals[i]
		}
		out = append(out, r)
	}
	return out, rs.Err()
}
