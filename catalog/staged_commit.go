package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// CommitSummary is what a batch's commit did.
type CommitSummary struct {
	Created, Overlaid, Skipped, Copies, CopiesSkipped int
	// Notes are the copies skipped, or that came in without a status their
	// record gave them, by record position.
	Notes []Rejection
}

// commitPage is how many staged records the commit reads at a time.
const commitPage = 500

// CommitImport applies staged batch id to the catalogue in one transaction:
// each record without a match, or whose rule's action is ActionNew, is created;
// one whose rule's action is ActionOverlay replaces its match's MARC (the
// catalogue's fields derived from it; the MARC it had is kept as a version
// and in the batch, for an undo); ActionSkip leaves it. The copies of created
// and overlaid records (952, 852 or 949) are added with their statuses. The
// commit is audited as one entry.
func CommitImport(ctx context.Context, d *db.DB, actor stacks.Actor, id int64) (CommitSummary, error) {
	var sum CommitSummary
	err := d.Write(ctx, func(tx *db.Tx) error {
		sum = CommitSummary{}
		b, err := FindImportBatch(tx, id)
		if err != nil {
			return err
		}
		if b.State != BatchStaged {
			return stacks.Errorf(stacks.ECONFLICT, "Batch %d is already %s.", id, b.State)
		}
		var next int64
		im, err := newImporter(tx, ImportOptions{Actor: actor, ItemType: b.ItemType, Branch: b.Branch, GenerateItems: b.GenerateItems}, &next)
		if err != nil {
			return err
		}
		c, err := newCommitter(tx, actor, id)
		if err != nil {
			return err
		}
		type row struct {
			pos     int
			source  string
			title   string
			rule    string
			matchID int64
		}
		for last := -1; ; {
			var page []row
			rows, err := tx.Query(`SELECT position, marc, title, match_rule, coalesce(match_id, 0) FROM import_batch_records
				WHERE batch_id = ? AND error = '' AND position > ? ORDER BY position LIMIT ?`, id, last, commitPage)
			if err != nil {
				return fmt.Errorf("read batch %d: %w", id, err)
			}
			for rows.Next() {
				var r row
				if err := rows.Scan(&r.pos, &r.source, &r.title, &r.rule, &r.matchID); err != nil {
					rows.Close()
					return err
				}
				page = append(page, r)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if len(page) == 0 {
				break
			}
			last = page[len(page)-1].pos
			for _, r := range page {
				action := ActionNew
				if r.rule != RuleNone {
					action = b.Actions[r.rule]
				}
				if action == ActionSkip {
					sum.Skipped++
					if err := c.outcome(r.pos, "skipped", 0, nil); err != nil {
						return err
					}
					continue
				}
				rec, err := marc.NewXMLReader(strings.NewReader(r.source)).Next()
				if err != nil {
					return fmt.Errorf("batch %d record %d: read the staged MARC: %w", id, r.pos, err)
				}
				var recordID int64
				created := action == ActionNew
				if !created {
					prev, err := c.overlay(r.matchID, rec, r.source)
					if errors.Is(err, errGone) {
						created = true // the record matched was deleted since: the import adds it
					} else if err != nil {
						return err
					} else {
						recordID = r.matchID
						sum.Overlaid++
						if err := c.outcome(r.pos, "overlaid", recordID, &prev); err != nil {
							return err
						}
					}
				}
				if created {
					if recordID, err = c.create(rec, r.source); err != nil {
						return err
					}
					sum.Created++
					if err := c.outcome(r.pos, "created", recordID, nil); err != nil {
						return err
					}
				}
				if err := c.copies(im, rec, r.pos, r.title, recordID, created, &sum); err != nil {
					return err
				}
			}
		}
		now := db.FormatTime(tx.Now())
		if _, err := tx.Exec(`UPDATE import_batches SET state = ?, created = ?, overlaid = ?, skipped = ?, copies = ?, committed_at = ? WHERE id = ?`,
			BatchCommitted, sum.Created, sum.Overlaid, sum.Skipped, sum.Copies, now, id); err != nil {
			return fmt.Errorf("mark batch %d committed: %w", id, err)
		}
		if sum.Created+sum.Overlaid >= analyzeAfter {
			for _, stmt := range db.Pick(tx, nil, analyzeImported) {
				if _, err := tx.Exec(stmt); err != nil {
					return fmt.Errorf("analyse the imported records: %w", err)
				}
			}
		}
		return tx.Audit(actor, "catalog.import.commit", "import_batch", id, fmt.Sprintf("%q: created %d, overlaid %d, skipped %d, errors %d; copies %d (%d skipped)",
			b.FileName, sum.Created, sum.Overlaid, sum.Skipped, b.Errors, sum.Copies, sum.CopiesSkipped))
	})
	return sum, err
}

var errGone = errors.New("record gone")

// committer holds the statements of one batch's commit.
type committer struct {
	tx                                   *db.Tx
	actor                                stacks.Actor
	batch                                int64
	staff                                sql.NullInt64
	readRec, insRec, updRec, lastVersion *db.Stmt
	insVersion, setOutcome, insBatchItem *db.Stmt
	insItem                              *db.Stmt
}

func newCommitter(tx *db.Tx, actor stacks.Actor, batch int64) (*committer, error) {
	c := &committer{tx: tx, actor: actor, batch: batch}
	if actor.StaffID != 0 {
		c.staff = sql.NullInt64{Int64: actor.StaffID, Valid: true}
	}
	for _, p := range []struct {
		st **db.Stmt
		q  string
	}{
		{&c.readRec, `SELECT title, author, isbn, publisher, coalesce(year, 0), subjects, control_number, marc, updated_at FROM records WHERE id = ?`},
		{&c.insRec, `INSERT INTO records (id, title, author, isbn, publisher, year, subjects, control_number, marc, created_at, updated_at)
			VALUES (` + nextRecordID + `, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`},
		{&c.updRec, `UPDATE records SET title = ?, author = ?, isbn = ?, publisher = ?, year = ?, subjects = ?, control_number = ?, marc = ?, updated_at = ? WHERE id = ?`},
		{&c.lastVersion, `SELECT version, marc FROM record_versions WHERE record_id = ? ORDER BY version DESC LIMIT 1`},
		{&c.insVersion, `INSERT INTO record_versions (record_id, version, marc, staff_id, actor, saved_at) VALUES (?, ?, ?, ?, ?, ?)`},
		{&c.setOutcome, `UPDATE import_batch_records SET outcome = ?, record_id = ?, prev_marc = ? WHERE batch_id = ? AND position = ?`},
		{&c.insBatchItem, `INSERT INTO import_batch_items (batch_id, item_id) VALUES (?, ?)`},
		{&c.insItem, `INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, call_number, location, status,
			withdrawn_at, withdrawn_reason, price_cents, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`},
	} {
		var err error
		if *p.st, err = tx.Prepare(p.q); err != nil {
			return nil, fmt.Errorf("prepare the commit: %w", err)
		}
	}
	return c, nil
}

func (c *committer) outcome(pos int, outcome string, recordID int64, prev *string) error {
	var rid sql.NullInt64
	if recordID != 0 {
		rid = sql.NullInt64{Int64: recordID, Valid: true}
	}
	var p sql.NullString
	if prev != nil {
		p = sql.NullString{String: *prev, Valid: true}
	}
	if _, err := c.setOutcome.Exec(outcome, rid, p, c.batch, pos); err != nil {
		return fmt.Errorf("batch %d record %d: %w", c.batch, pos, err)
	}
	return nil
}

// create adds rec (kept as source) as a new record, its MARC version 1.
func (c *committer) create(rec *marc.Record, source string) (int64, error) {
	b := BibOf(rec)
	now := db.FormatTime(c.tx.Now())
	var id int64
	if err := c.insRec.QueryRow(b.Title, b.Author, b.ISBN, b.Publisher, nullYear(b.Year), strings.Join(b.Subjects, "\n"), b.ControlNumber,
		source, now, now).Scan(&id); err != nil {
		return 0, fmt.Errorf("insert record: %w", err)
	}
	if _, err := c.insVersion.Exec(id, 1, source, c.staff, c.actor.Name, now); err != nil {
		return 0, fmt.Errorf("record %d: keep version 1: %w", id, err)
	}
	return id, nil
}

// overlay replaces record id's MARC by rec (source), deriving its fields, and
// returns the MARC it had. The MARC it had is kept as a version when its last
// version does not hold it (as saveMARC keeps it), then the new one. errGone
// when there is no record id.
func (c *committer) overlay(id int64, rec *marc.Record, source string) (string, error) {
	prev, err := c.replace(id, rec, source)
	return prev, err
}

// replace is overlay, and an undo's restore.
func (c *committer) replace(id int64, rec *marc.Record, source string) (string, error) {
	var old Bib
	var subjects, oldSource, updatedAt string
	err := c.readRec.QueryRow(id).Scan(&old.Title, &old.Author, &old.ISBN, &old.Publisher, &old.Year, &subjects, &old.ControlNumber, &oldSource, &updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return "", errGone
	} else if err != nil {
		return "", fmt.Errorf("find record %d: %w", id, err)
	}
	old.Subjects = lines(subjects)
	prev, err := marc.ToXML(keptMARC(old, oldSource))
	if err != nil {
		return "", fmt.Errorf("record %d: keep the previous MARC: %w", id, err)
	}
	b := BibOf(rec)
	now := db.FormatTime(c.tx.Now())
	if _, err := c.updRec.Exec(b.Title, b.Author, b.ISBN, b.Publisher, nullYear(b.Year), strings.Join(b.Subjects, "\n"), b.ControlNumber,
		source, now, id); err != nil {
		return "", fmt.Errorf("overlay record %d: %w", id, err)
	}
	var last int
	var lastSource string
	if err := c.lastVersion.QueryRow(id).Scan(&last, &lastSource); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("record %d versions: %w", id, err)
	}
	if last == 0 || (lastSource != prev && lastSource != oldSource) {
		last++
		if _, err := c.insVersion.Exec(id, last, prev, nil, "", updatedAt); err != nil {
			return "", fmt.Errorf("record %d: keep version %d: %w", id, last, err)
		}
	}
	if _, err := c.insVersion.Exec(id, last+1, source, c.staff, c.actor.Name, now); err != nil {
		return "", fmt.Errorf("record %d: keep version %d: %w", id, last+1, err)
	}
	return prev, nil
}

// copies adds rec's holdings to record id as the direct import does, with their
// statuses, remembering each in the batch.
func (c *committer) copies(im *importer, rec *marc.Record, pos int, title string, id int64, created bool, sum *CommitSummary) error {
	holdings := HoldingsOf(rec)
	if len(holdings) == 0 && created && im.opt.GenerateItems {
		holdings = []Holding{{}}
	}
	now := db.FormatTime(c.tx.Now())
	note := func(reason string) {
		sum.Notes = append(sum.Notes, Rejection{Index: pos, Title: title, Reason: reason})
	}
	for _, h := range holdings {
		branch, itype := im.defBranch, im.defType
		if v, ok := im.branches[strings.ToUpper(strings.TrimSpace(h.HomeBranch))]; ok && h.HomeBranch != "" {
			branch = v
		}
		if v, ok := im.itemTypes[strings.ToUpper(strings.TrimSpace(h.ItemType))]; ok && h.ItemType != "" {
			itype = v
		}
		barcode := strings.TrimSpace(h.Barcode)
		if barcode == "" {
			var err error
			if barcode, err = im.generateBarcode(); err != nil {
				return err
			}
		}
		if _, err := NormalizeBarcode(barcode); err != nil {
			sum.CopiesSkipped++
			note(fmt.Sprintf("copy skipped: bad barcode %q", barcode))
			continue
		}
		var owner int64
		err := im.itemExists.QueryRow(barcode).Scan(&owner)
		if err == nil {
			if owner != id {
				sum.CopiesSkipped++
				note(fmt.Sprintf("copy %s skipped: that barcode belongs to another record (%d)", barcode, owner))
			}
			continue
		} else if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("look up barcode %s: %w", barcode, err)
		}
		status, reason, snote := ImportedStatus(h)
		var withdrawnAt sql.NullString
		if status == StatusWithdrawn {
			withdrawnAt = sql.NullString{String: now, Valid: true}
		}
		var itemID int64
		if err := c.insItem.QueryRow(barcode, id, branch, branch, itype, strings.TrimSpace(h.CallNumber), importedLocation(h.Location),
			status, withdrawnAt, reason, h.PriceCents, now, now).Scan(&itemID); err != nil {
			return fmt.Errorf("insert copy %s: %w", barcode, err)
		}
		if _, err := c.insBatchItem.Exec(c.batch, itemID); err != nil {
			return fmt.Errorf("batch %d: remember copy %s: %w", c.batch, barcode, err)
		}
		sum.Copies++
		if snote != "" {
			note("copy " + barcode + ": " + snote)
		}
	}
	return nil
}

// UndoSummary is what an undo did.
type UndoSummary struct {
	Deleted, Restored, CopiesDeleted int
}

// UndoImport undoes committed batch id while none of its copies has
// circulated: the records it created are deleted with their copies (OAI-PMH
// reports them deleted), the copies it added to records it overlaid are
// deleted, and the records it overlaid get back the MARC they had (kept as a
// new version). Refused, saying why, when a copy has been lent or a record or
// copy of the batch has a hold. Audited as one entry.
func UndoImport(ctx context.Context, d *db.DB, actor stacks.Actor, id int64) (UndoSummary, error) {
	var sum UndoSummary
	err := d.Write(ctx, func(tx *db.Tx) error {
		sum = UndoSummary{}
		b, err := FindImportBatch(tx, id)
		if err != nil {
			return err
		}
		if b.State != BatchCommitted {
			return stacks.Errorf(stacks.ECONFLICT, "Batch %d is %s: only a committed batch can be undone.", id, b.State)
		}
		created, err := tx.IDs(`SELECT s.record_id FROM import_batch_records s JOIN records r ON r.id = s.record_id
			WHERE s.batch_id = ? AND s.outcome = 'created' ORDER BY s.record_id`, id)
		if err != nil {
			return fmt.Errorf("batch %d: created records: %w", id, err)
		}
		items, err := tx.IDs(`SELECT i.id FROM items i WHERE i.id IN (SELECT item_id FROM import_batch_items WHERE batch_id = ?)
			OR i.record_id IN (SELECT record_id FROM import_batch_records WHERE batch_id = ? AND outcome = 'created')
			ORDER BY i.id`, id, id)
		if err != nil {
			return fmt.Errorf("batch %d: copies: %w", id, err)
		}
		if err := refuseCirculated(tx, id); err != nil {
			return err
		}
		for i := 0; i < len(items); i += 1000 {
			if err := deleteItemRows(tx, items[i:min(i+1000, len(items))]); err != nil {
				return err
			}
		}
		sum.CopiesDeleted = len(items)
		for _, rid := range created {
			if _, err := tx.Exec(`DELETE FROM record_redirects WHERE to_id = ?`, rid); err != nil {
				return fmt.Errorf("delete redirects to record %d: %w", rid, err)
			}
			if _, err := tx.Exec(`DELETE FROM records WHERE id = ?`, rid); err != nil {
				return fmt.Errorf("delete record %d: %w", rid, err)
			}
		}
		sum.Deleted = len(created)
		// Overlaid records get back their MARC, the last overlay first, so that a
		// record the file matched twice ends as it was before the first.
		type overlaid struct {
			recordID int64
			prev     string
		}
		var restore []overlaid
		rows, err := tx.Query(`SELECT record_id, prev_marc FROM import_batch_records
			WHERE batch_id = ? AND outcome = 'overlaid' ORDER BY position DESC`, id)
		if err != nil {
			return fmt.Errorf("batch %d: overlaid records: %w", id, err)
		}
		for rows.Next() {
			var o overlaid
			if err := rows.Scan(&o.recordID, &o.prev); err != nil {
				rows.Close()
				return err
			}
			restore = append(restore, o)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		c, err := newCommitter(tx, actor, id)
		if err != nil {
			return err
		}
		for _, o := range restore {
			rec, err := marc.NewXMLReader(strings.NewReader(o.prev)).Next()
			if err != nil {
				return fmt.Errorf("record %d: read the MARC before the import: %w", o.recordID, err)
			}
			if _, err := c.replace(o.recordID, rec, o.prev); errors.Is(err, errGone) {
				continue // deleted since: nothing to restore
			} else if err != nil {
				return err
			}
			sum.Restored++
		}
		if _, err := tx.Exec(`UPDATE import_batches SET state = ?, undone_at = ? WHERE id = ?`, BatchUndone, db.FormatTime(tx.Now()), id); err != nil {
			return fmt.Errorf("mark batch %d undone: %w", id, err)
		}
		return tx.Audit(actor, "catalog.import.undo", "import_batch", id, fmt.Sprintf("%q: %d records deleted, %d restored, %d copies deleted",
			b.FileName, sum.Deleted, sum.Restored, sum.CopiesDeleted))
	})
	return sum, err
}

// refuseCirculated refuses the undo of batch when one of its copies has been
// lent or has a hold, or one of the records it created has a hold.
func refuseCirculated(tx *db.Tx, batch int64) error {
	const batchItems = `(SELECT item_id FROM import_batch_items WHERE batch_id = ?1
		UNION SELECT i.id FROM items i JOIN import_batch_records s ON s.record_id = i.record_id AND s.batch_id = ?1 AND s.outcome = 'created')`
	var barcode string
	err := tx.QueryRow(`SELECT i.barcode FROM loans l JOIN items i ON i.id = l.item_id WHERE l.item_id IN `+batchItems+` ORDER BY i.barcode LIMIT 1`, batch).Scan(&barcode)
	if err == nil {
		return stacks.Errorf(stacks.ECONFLICT, "Batch %d cannot be undone: its copy %s has been lent, and its loan history names it. Withdraw or edit its records instead.", batch, barcode)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("find loans of batch %d: %w", batch, err)
	}
	err = tx.QueryRow(`SELECT i.barcode FROM holds h JOIN items i ON i.id = h.item_id OR i.id = h.trapped_item_id
		WHERE i.id IN `+batchItems+` ORDER BY i.barcode LIMIT 1`, batch).Scan(&barcode)
	if err == nil {
		return stacks.Errorf(stacks.ECONFLICT, "Batch %d cannot be undone: its copy %s has a hold. Cancel or fill the hold first.", batch, barcode)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("find holds on batch %d: %w", batch, err)
	}
	var rid int64
	err = tx.QueryRow(`SELECT h.record_id FROM holds h JOIN import_batch_records s ON s.record_id = h.record_id AND s.batch_id = ?1 AND s.outcome = 'created'
		ORDER BY h.record_id LIMIT 1`, batch).Scan(&rid)
	if err == nil {
		return stacks.Errorf(stacks.ECONFLICT, "Batch %d cannot be undone: record %d, which it created, has a hold. Cancel the hold or move it to another record first.", batch, rid)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("find holds on batch %d: %w", batch, err)
	}
	return nil
}
