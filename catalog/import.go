package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// ImportOptions say what to do with the records of a MARC file.
type ImportOptions struct {
	Actor stacks.Actor
	// ItemType and Branch (codes) are used for copies whose holdings fields do not
	// name them, and for the generated copy of a record without holdings.
	ItemType string
	Branch   string
	// GenerateItems creates one copy with a generated barcode for each new record
	// that has no holdings fields.
	GenerateItems bool
	// BatchSize is how many records go in one transaction (default 500).
	BatchSize int
	// Progress, if set, is called after each batch with the records read so far and
	// the bytes consumed, if known.
	Progress func(records int)
}

// Rejection is a record, or a copy, that was not imported, and why.
type Rejection struct {
	Index  int   // 0-based record number in the file
	Offset int64 // byte offset, when known
	Title  string
	Reason string
}

// ImportSummary is the outcome of an import.
type ImportSummary struct {
	Read         int
	Created      int
	Updated      int
	Rejected     int
	ItemsCreated int
	ItemsSkipped int
	// Rejections lists rejected records and skipped copies, with reasons.
	Rejections []Rejection
	// Notes lists copies imported with something staff should know (a Koha
	// status Stacks has no item status for), in Rejection's shape.
	Notes []Rejection
}

// importer holds the prepared statements and lookups of one batch transaction.
type importer struct {
	tx                  *db.Tx
	opt                 ImportOptions
	branches, itemTypes map[string]int64
	defBranch, defType  int64
	match               *Matcher
	insRecord, updRec   *db.Stmt
	delKeys, insKey     *db.Stmt
	insItem, itemExists *db.Stmt
	nextBarcode         *int64
}

// Import reads MARC records from rr and adds them to the catalogue, in batches of
// BatchSize records per transaction. A record that matches an existing one (by
// the Matcher's rules, barcode included) updates the first it matches instead of
// adding a duplicate. Malformed records are rejected with their position and
// reason while the rest import.
func Import(ctx context.Context, d *db.DB, rr marc.RecordReader, opt ImportOptions) (ImportSummary, error) {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 500
	}
	var sum ImportSummary
	var next int64
	if err := BuildSystemNumbers(ctx, d); err != nil {
		return sum, err
	}
	m := NewMatcher()
	m.ByBarcode = true
	index := 0
	done := false
	for !done {
		type item struct {
			rec   *marc.Record
			index int
		}
		var batch []item
		for len(batch) < opt.BatchSize {
			rec, err := rr.Next()
			var rerr *marc.RecordError
			switch {
			case err == io.EOF:
				done = true
			case errors.As(err, &rerr):
				sum.Read++
				sum.Rejected++
				sum.Rejections = append(sum.Rejections, Rejection{Index: rerr.Index, Offset: rerr.Offset, Reason: rerr.Reason})
				index++
				continue
			case err != nil:
				if m := malformed(err); m != nil {
					return sum, m
				}
				return sum, fmt.Errorf("read record %d: %w", index, err)
			default:
				sum.Read++
				batch = append(batch, item{rec, index})
				index++
				continue
			}
			break
		}
		if len(batch) == 0 {
			break
		}
		err := d.Write(ctx, func(tx *db.Tx) error {
			im, err := newImporter(tx, opt, &next)
			if err != nil {
				return err
			}
			im.match = m
			recs := make([]*marc.Record, len(batch))
			for i, it := range batch {
				recs[i] = it.rec
			}
			if err := m.Prefetch(tx, recs); err != nil {
				return err
			}
			for _, it := range batch {
				if err := im.record(it.rec, it.index, &sum); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return sum, err
		}
		if opt.Progress != nil {
			opt.Progress(sum.Read)
		}
	}
	err := d.Write(ctx, func(tx *db.Tx) error {
		if sum.Created+sum.Updated >= analyzeAfter {
			for _, stmt := range db.Pick(tx, nil, analyzeImported) {
				if _, err := tx.Exec(stmt); err != nil {
					return fmt.Errorf("analyse the imported records: %w", err)
				}
			}
		}
		return tx.Audit(opt.Actor, "catalog.import", "", 0, fmt.Sprintf("read %d, created %d, updated %d, rejected %d, copies %d (%d skipped)",
			sum.Read, sum.Created, sum.Updated, sum.Rejected, sum.ItemsCreated, sum.ItemsSkipped))
	})
	return sum, err
}

// analyzeAfter is how many records an import creates or updates before it
// runs analyzeImported (on PostgreSQL).
const analyzeAfter = 1000

// analyzeImported, after a large import on PostgreSQL: the planner's statistics
// of the catalogue, without waiting for autovacuum (a search's plan depends on
// how many records have its words). SQLite needs none:
// FTS5 keeps its own, and Stacks runs no ANALYZE there.
var analyzeImported = []string{`ANALYZE records, records_fts, items`}

// CheckXML reads the MARCXML document r to its end, importing nothing, and
// returns the fault that would stop an import of it part way: XML that is not well
// formed (a file cut short, a bare "&", an entity a DTD declares) or a text over
// 8 MB, as an EINVALID error about the "file" field that says what and where. An
// importer calls it first, so that such a file imports nothing rather than its
// first batches. Records that are merely bad are no fault here: Import rejects
// them one by one.
func CheckXML(r io.Reader) error {
	xr := marc.NewXMLReader(r)
	for {
		_, err := xr.Next()
		var rerr *marc.RecordError
		switch {
		case err == nil, errors.As(err, &rerr):
			continue
		case errors.Is(err, io.EOF):
			return nil
		}
		if m := malformed(err); m != nil {
			return m
		}
		return fmt.Errorf("check MARCXML: %w", err)
	}
}

// malformed is the message for a document that cannot be read to its end, or nil
// if err is not about the document.
func malformed(err error) *stacks.Error {
	var serr *marc.SyntaxError
	if !errors.As(err, &serr) {
		return nil
	}
	return stacks.FieldErrorf("file", stacks.EINVALID,
		"The file is not well-formed MARCXML: at line %d (near byte %d), %s. Correct the file and import it again.",
		serr.Line, serr.Offset, serr.Reason)
}

func newImporter(tx *db.Tx, opt ImportOptions, next *int64) (*importer, error) {
	im := &importer{tx: tx, opt: opt, branches: map[string]int64{}, itemTypes: map[string]int64{}, nextBarcode: next}
	rows, err := tx.Query(`SELECT 'b', code, id FROM branches UNION ALL SELECT 't', code, id FROM item_types`)
	if err != nil {
		return nil, fmt.Errorf("read branches and item types: %w", err)
	}
	for rows.Next() {
		var kind, code string
		var id int64
		if err := rows.Scan(&kind, &code, &id); err != nil {
			rows.Close()
			return nil, err
		}
		if kind == "b" {
			im.branches[strings.ToUpper(code)] = id
		} else {
			im.itemTypes[strings.ToUpper(code)] = id
		}
	}
	rows.Close()
	var ok bool
	if im.defBranch, ok = im.branches[strings.ToUpper(opt.Branch)]; !ok {
		return nil, stacks.Errorf(stacks.EINVALID, "There is no branch with code %q: choose the branch for copies the records do not place.", opt.Branch)
	}
	if im.defType, ok = im.itemTypes[strings.ToUpper(opt.ItemType)]; !ok {
		return nil, stacks.Errorf(stacks.EINVALID, "There is no item type with code %q: choose the type for copies the records do not type.", opt.ItemType)
	}
	if *next == 0 {
		if err := tx.QueryRow(`SELECT count(*) + 1 FROM items`).Scan(next); err != nil {
			return nil, err
		}
	}
	for _, p := range []struct {
		st **db.Stmt
		q  string
	}{
		{&im.insRecord, `INSERT INTO records (id, title, author, isbn, publisher, year, subjects, control_number, marc, created_at, updated_at)
			VALUES (` + nextRecordID + `, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`},
		{&im.updRec, `UPDATE records SET title = ?, author = ?, isbn = ?, publisher = ?, year = ?, subjects = ?, control_number = ?, marc = ?, updated_at = ? WHERE id = ?`},
		{&im.delKeys, `DELETE FROM record_system_numbers WHERE record_id = ?`},
		{&im.insKey, `INSERT INTO record_system_numbers (key, record_id) VALUES (?, ?)`},
		{&im.insItem, `INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, call_number, location, status, withdrawn_at, withdrawn_reason, price_cents, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&im.itemExists, `SELECT record_id FROM items WHERE barcode = ?`},
	} {
		if *p.st, err = tx.Prepare(p.q); err != nil {
			return nil, fmt.Errorf("prepare import: %w", err)
		}
	}
	return im, nil
}

// nextGenerated returns the next generated barcode (M and 8 digits), taken
// or not, and moves on.
func (im *importer) nextGenerated() string {
	bc := fmt.Sprintf("M%08d", *im.nextBarcode)
	*im.nextBarcode++
	return bc
}

// generateBarcode returns the next free generated barcode, M followed by 8 digits.
func (im *importer) generateBarcode() (string, error) {
	for {
		bc := im.nextGenerated()
		var owner int64
		err := im.itemExists.QueryRow(bc).Scan(&owner)
		if errors.Is(err, sql.ErrNoRows) {
			return bc, nil
		} else if err != nil {
			return "", fmt.Errorf("look up barcode %s: %w", bc, err)
		}
	}
}

func nullYear(y int) sql.NullInt64 { return sql.NullInt64{Int64: int64(y), Valid: y > 0} }

// record imports one record.
func (im *importer) record(rec *marc.Record, index int, sum *ImportSummary) error {
	b := BibOf(rec)
	reject := func(reason string) {
		sum.Rejected++
		sum.Rejections = append(sum.Rejections, Rejection{Index: index, Title: b.Title, Reason: reason})
	}
	if b.Title == "" {
		reject("no title (245 $a)")
		return nil
	}
	source, err := marc.ToXML(rec)
	if err != nil {
		reject("cannot be stored: " + err.Error())
		return nil
	}
	now := db.FormatTime(im.tx.Now())
	subjects := strings.Join(b.Subjects, "\n")

	// Match an existing record, or one this import created.
	_, id, _ := im.match.Match(rec)
	holdings := HoldingsOf(rec)
	created := id == 0
	if created {
		if err := im.insRecord.QueryRow(b.Title, b.Author, b.ISBN, b.Publisher, nullYear(b.Year), subjects, b.ControlNumber, source, now, now).Scan(&id); err != nil {
			return fmt.Errorf("insert record: %w", err)
		}
		sum.Created++
		im.match.Add(rec, id)
	} else {
		if _, err := im.updRec.Exec(b.Title, b.Author, b.ISBN, b.Publisher, nullYear(b.Year), subjects, b.ControlNumber, source, now, id); err != nil {
			return fmt.Errorf("update record %d: %w", id, err)
		}
		// The MARC replaced is not read: its 035 numbers go whatever they were.
		if _, err := im.delKeys.Exec(id); err != nil {
			return fmt.Errorf("record %d: index the 035 numbers: %w", id, err)
		}
		sum.Updated++
		im.match.Add(rec, id)
	}
	for _, k := range uniqueKeys(rec) {
		if _, err := im.insKey.Exec(k, id); err != nil {
			return fmt.Errorf("record %d: index the 035 numbers: %w", id, err)
		}
	}

	if len(holdings) == 0 && created && im.opt.GenerateItems {
		holdings = []Holding{{}}
	}
	for _, h := range holdings {
		branch, itype := im.defBranch, im.defType
		if h.HomeBranch != "" {
			if v, ok := im.branches[strings.ToUpper(strings.TrimSpace(h.HomeBranch))]; ok {
				branch = v
			}
		}
		if h.ItemType != "" {
			if v, ok := im.itemTypes[strings.ToUpper(strings.TrimSpace(h.ItemType))]; ok {
				itype = v
			}
		}
		barcode := strings.TrimSpace(h.Barcode)
		if barcode == "" {
			var err error
			if barcode, err = im.generateBarcode(); err != nil {
				return err
			}
		}
		if _, err := NormalizeBarcode(barcode); err != nil {
			sum.ItemsSkipped++
			sum.Rejections = append(sum.Rejections, Rejection{Index: index, Title: b.Title, Reason: "copy skipped: bad barcode " + fmt.Sprintf("%q", barcode)})
			continue
		}
		var owner int64
		err := im.itemExists.QueryRow(barcode).Scan(&owner)
		if err == nil {
			if owner != id {
				sum.ItemsSkipped++
				sum.Rejections = append(sum.Rejections, Rejection{Index: index, Title: b.Title,
					Reason: fmt.Sprintf("copy %s skipped: that barcode belongs to another record (%d)", barcode, owner)})
			}
			continue // already there
		} else if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("look up barcode %s: %w", barcode, err)
		}
		status, reason, note := ImportedStatus(h)
		var withdrawnAt sql.NullString
		if status == StatusWithdrawn {
			withdrawnAt = sql.NullString{String: now, Valid: true}
		}
		if _, err := im.insItem.Exec(barcode, id, branch, branch, itype, strings.TrimSpace(h.CallNumber), importedLocation(h.Location),
			status, withdrawnAt, reason, h.PriceCents, now, now); err != nil {
			return fmt.Errorf("insert copy %s: %w", barcode, err)
		}
		if note != "" {
			sum.Notes = append(sum.Notes, Rejection{Index: index, Title: b.Title, Reason: "copy " + barcode + ": " + note})
		}
		sum.ItemsCreated++
	}
	return nil
}

// importedLocation is a holding's shelving location as an item keeps it: trimmed,
// empty if it is not one line of text, and cut to the item form's limit (a
// library's location names are short; a longer one is a vendor's note).
func importedLocation(s string) string {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) || hasControl(s) {
		return ""
	}
	if r := []rune(s); len(r) > maxLocation {
		s = strings.TrimSpace(string(r[:maxLocation]))
	}
	return s
}
