package catalog

import (
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// marcRow is a MARC record as the records table stores it: the catalogue's
// fields derived from it (BibOf) and the record itself as MARCXML.
type marcRow struct {
	bib    Bib
	source string
}

func marcRowOf(rec *marc.Record) (marcRow, error) {
	b := BibOf(rec)
	if b.Title == "" {
		return marcRow{}, stacks.Errorf(stacks.EINVALID, "The record has no title (245 $a), so the catalogue cannot show it; choose another record.")
	}
	source, err := marc.ToXML(rec)
	if err != nil {
		return marcRow{}, stacks.Errorf(stacks.EINVALID, "The record cannot be stored: %s.", err)
	}
	return marcRow{bib: b, source: source}, nil
}

// CreateRecordFromMARC adds rec as a new record, whatever records it matches
// (copy cataloguing's "add anyway"), and returns its id. Its catalogue fields are
// derived from it as an import derives them; its MARC is kept as its source.
func CreateRecordFromMARC(tx *db.Tx, actor stacks.Actor, rec *marc.Record, origin string) (int64, error) {
	row, err := marcRowOf(rec)
	if err != nil {
		return 0, err
	}
	b, now := row.bib, db.FormatTime(tx.Now())
	var id int64
	err = tx.QueryRow(`INSERT INTO records (id, title, author, isbn, publisher, year, subjects, control_number, marc, created_at, updated_at)
		VALUES (`+nextRecordID+`, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		b.Title, b.Author, b.ISBN, b.Publisher, nullYear(b.Year), strings.Join(b.Subjects, "\n"), b.ControlNumber, row.source, now, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert record: %w", err)
	}
	if err := tx.Audit(actor, "record.create", "record", id, fmt.Sprintf("%q by %q from %s", b.Title, b.Author, origin)); err != nil {
		return 0, err
	}
	return id, nil
}

// OverlayRecordFromMARC replaces record id's MARC, and the catalogue fields
// derived from it, by rec; its copies and holds stay. ENOTFOUND when there is no
// record id.
func OverlayRecordFromMARC(tx *db.Tx, actor stacks.Actor, id int64, rec *marc.Record, origin string) error {
	row, err := marcRowOf(rec)
	if err != nil {
		return err
	}
	old, err := RecordInputOf(tx, id)
	if err != nil {
		return err
	}
	b := row.bib
	res, err := tx.Exec(`UPDATE records SET title = ?, author = ?, isbn = ?, publisher = ?, year = ?, subjects = ?,
		control_number = ?, marc = ?, updated_at = ? WHERE id = ?`,
		b.Title, b.Author, b.ISBN, b.Publisher, nullYear(b.Year), strings.Join(b.Subjects, "\n"), b.ControlNumber, row.source,
		db.FormatTime(tx.Now()), id)
	if err != nil {
		return fmt.Errorf("overlay record %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNoRecord(id)
	}
	return tx.Audit(actor, "record.overlay", "record", id, fmt.Sprintf("MARC replaced from %s; was %q by %q", origin, old.Title, old.Author))
}
