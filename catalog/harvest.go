package catalog

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// HarvestQuery selects records for a harvester (OAI-PMH): those changed (or
// deleted) between From and Until, inclusive, to the second (zero: no bound),
// after the record AfterID, at most Limit of them.
type HarvestQuery struct {
	From, Until time.Time
	AfterID     int64
	Limit       int
	// WithRecords reads each record's fields, source record and copies; without
	// it only ids, datestamps and deletions are read (ListIdentifiers).
	WithRecords bool
}

// HarvestRecord is a record as a harvester receives it: its id, when it last
// changed, whether it was deleted, and (WithRecords) its fields and copies.
type HarvestRecord struct {
	ID        int64
	Datestamp time.Time
	Deleted   bool
	Bib       Bib
	Copies    []HarvestCopy
	source    string
}

// HarvestCopy is a copy of a harvested record with its availability.
type HarvestCopy struct {
	Barcode    string
	BranchCode string
	BranchName string
	CallNumber string
	Status     string
	// DueAt is when a copy on loan is due back.
	DueAt time.Time
}

// MaxHarvestLimit bounds HarvestQuery.Limit.
const MaxHarvestLimit = 5000

// harvest returns a page of records in id order, and whether more follow. It
// runs two statements whatever the page's size: the records (with the deleted
// ones), then their copies.
func harvest(tx *db.Tx, q HarvestQuery) ([]HarvestRecord, bool, error) {
	if q.Limit <= 0 || q.Limit > MaxHarvestLimit {
		q.Limit = 100
	}
	from, until := "", "9999"
	if !q.From.IsZero() {
		from = db.FormatTime(q.From)
	}
	if !q.Until.IsZero() {
		until = db.FormatTime(q.Until)
	}
	cols := `'', '', '', '', 0, '', '', ''`
	if q.WithRecords {
		cols = `title, author, isbn, publisher, coalesce(year, 0), subjects, control_number, marc`
	}
	rows, err := tx.Query(`SELECT id, updated_at, 0, `+cols+` FROM records
			WHERE id > ?1 AND updated_at >= ?2 AND updated_at <= ?3
		UNION ALL
		SELECT record_id, deleted_at, 1, '', '', '', '', 0, '', '', '' FROM deleted_records
			WHERE record_id > ?1 AND deleted_at >= ?2 AND deleted_at <= ?3
		ORDER BY 1 LIMIT ?4`, q.AfterID, from, until, q.Limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("harvest records: %w", err)
	}
	out, err := scanHarvest(rows)
	if err != nil {
		return nil, false, err
	}
	more := len(out) > q.Limit
	if more {
		out = out[:q.Limit]
	}
	if q.WithRecords {
		if err := harvestCopies(tx, out); err != nil {
			return nil, false, err
		}
	}
	return out, more, nil
}

// findHarvestRecord returns one record, live or deleted, with its copies.
func findHarvestRecord(tx *db.Tx, id int64) (HarvestRecord, error) {
	rows, err := tx.Query(`SELECT id, updated_at, 0, title, author, isbn, publisher, coalesce(year, 0), subjects, control_number, marc
			FROM records WHERE id = ?1
		UNION ALL
		SELECT record_id, deleted_at, 1, '', '', '', '', 0, '', '', '' FROM deleted_records
			WHERE record_id = ?1 AND NOT EXISTS (SELECT 1 FROM records WHERE id = ?1)`, id)
	if err != nil {
		return HarvestRecord{}, fmt.Errorf("harvest record %d: %w", id, err)
	}
	out, err := scanHarvest(rows)
	if err != nil {
		return HarvestRecord{}, err
	}
	if len(out) == 0 {
		return HarvestRecord{}, stacks.Errorf(stacks.ENOTFOUND, "There is no record %d in the catalogue.", id)
	}
	return out[0], harvestCopies(tx, out[:1])
}

// earliestDatestamp returns the oldest datestamp a harvest can return (the
// catalogue's first change or deletion); the zero time for an empty catalogue.
func earliestDatestamp(tx *db.Tx) (time.Time, error) {
	var s sql.NullString
	err := tx.QueryRow(`SELECT min(d) FROM (SELECT min(updated_at) AS d FROM records UNION ALL SELECT min(deleted_at) FROM deleted_records) AS m`).Scan(&s)
	if err != nil {
		return time.Time{}, fmt.Errorf("earliest datestamp: %w", err)
	}
	if !s.Valid {
		return time.Time{}, nil
	}
	return db.ParseTime(s.String)
}

func scanHarvest(rows *sql.Rows) ([]HarvestRecord, error) {
	defer rows.Close()
	var out []HarvestRecord
	for rows.Next() {
		var h HarvestRecord
		var stamp db.Time
		var subjects string
		if err := rows.Scan(&h.ID, &stamp, &h.Deleted, &h.Bib.Title, &h.Bib.Author, &h.Bib.ISBN, &h.Bib.Publisher, &h.Bib.Year,
			&subjects, &h.Bib.ControlNumber, &h.source); err != nil {
			return nil, fmt.Errorf("harvest records: %w", err)
		}
		h.Datestamp = stamp.Time
		for _, s := range strings.Split(subjects, "\n") {
			if s = strings.TrimSpace(s); s != "" {
				h.Bib.Subjects = append(h.Bib.Subjects, s)
			}
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// harvestCopies reads the copies of the live records of page in one statement.
func harvestCopies(tx *db.Tx, page []HarvestRecord) error {
	var ids []int64
	index := map[int64]int{}
	for i, h := range page {
		if !h.Deleted {
			ids = append(ids, h.ID)
			index[h.ID] = i
		}
	}
	if len(ids) == 0 {
		return nil
	}
	in, args := idArgs(ids)
	rows, err := tx.Query(`SELECT i.record_id, i.barcode, b.code, b.name, i.call_number, i.status, l.due_at
		FROM items i JOIN branches b ON b.id = i.home_branch_id
		LEFT JOIN loans l ON l.item_id = i.id AND l.returned_at IS NULL
		WHERE i.record_id IN (`+in+`) AND i.status <> 'withdrawn' ORDER BY i.record_id, b.name, i.barcode`, args...)
	if err != nil {
		return fmt.Errorf("harvest copies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var c HarvestCopy
		var due db.NullTime
		if err := rows.Scan(&rid, &c.Barcode, &c.BranchCode, &c.BranchName, &c.CallNumber, &c.Status, &due); err != nil {
			return fmt.Errorf("harvest copies: %w", err)
		}
		c.DueAt = due.Time
		h := &page[index[rid]]
		h.Copies = append(h.Copies, c)
	}
	return rows.Err()
}

// PublicStatus is how a patron (or a discovery layer) reads a copy's status:
// "Available", "On loan until 2026-12-21" (due, a day in the library's time
// zone), "On the hold shelf", "In transit", "Not available".
func PublicStatus(status, due string) string {
	switch status {
	case StatusAvailable:
		return "Available"
	case StatusOnLoan:
		if due != "" {
			return "On loan until " + due
		}
		return "On loan"
	case StatusOnHoldShelf:
		return "On the hold shelf"
	case StatusInTransit:
		return "In transit"
	}
	return "Not available"
}

// privateField reports whether a field of a source record is the library's
// business, not the public's: acquisition source (541), ownership and custodial
// history (561) and actions (583) marked private (first indicator 0), and local
// fields (9XX: item data, staff notes of other systems).
func privateField(f marc.Field) bool {
	switch f.Tag {
	case "541", "561", "583":
		return f.Ind1 == '0'
	}
	return f.Tag[0] == '9'
}

// MARC returns the record as MARC 21 for harvesters: the source record (or one
// made from the catalogue's fields, as Export does) without its private fields
// (privateField), with one 852 field a copy: $a the library (libraryCode), $b
// the branch code, $c the branch name, $h the call number, $z its availability
// (PublicStatus, the due day in loc). Barcodes are not published: patrons'
// pages do not show them either.
func (h *HarvestRecord) MARC(libraryCode string, loc *time.Location) (*marc.Record, error) {
	if h.Deleted {
		return nil, errors.New("a deleted record has no MARC")
	}
	rec, err := exportRecord(h.Bib, h.source, nil)
	if err != nil {
		return nil, err
	}
	public := rec.Fields[:0:0]
	for _, f := range rec.Fields {
		if !privateField(f) {
			public = append(public, f)
		}
	}
	rec.Fields = public
	for _, c := range h.Copies {
		due := ""
		if !c.DueAt.IsZero() {
			due = c.DueAt.In(loc).Format(db.DayFormat)
		}
		sf := []marc.Subfield{{Code: 'a', Value: libraryCode}, {Code: 'b', Value: c.BranchCode}, {Code: 'c', Value: c.BranchName}}
		if c.CallNumber != "" {
			sf = append(sf, marc.Subfield{Code: 'h', Value: c.CallNumber})
		}
		sf = append(sf, marc.Subfield{Code: 'z', Value: PublicStatus(c.Status, due)})
		rec.Fields = append(rec.Fields, marc.Field{Tag: "852", Ind1: ' ', Ind2: ' ', Subfields: sf})
	}
	// Values written before the catalogue refused non-XML characters, or
	// imported, may hold some: a harvest must not break on one record.
	rec.Clean()
	return rec, nil
}
