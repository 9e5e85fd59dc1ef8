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
		for last := -1; ; {
			var more bool
			if last, more, err = c.page(im, b, last, &sum); err != nil {
				return err
			}
			if !more {
				break
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
	tx                           *db.Tx
	actor                        stacks.Actor
	batch                        int64
	staff                        sql.NullInt64
	readRec, updRec, lastVersion *db.Stmt
	insVersion                   *db.Stmt
	// nextID is the id the next record created gets.
	nextID int64
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
		{&c.updRec, `UPDATE records SET title = ?, author = ?, isbn = ?, publisher = ?, year = ?, subjects = ?, control_number = ?, marc = ?, updated_at = ? WHERE id = ?`},
		{&c.lastVersion, `SELECT version, marc FROM record_versions WHERE record_id = ? ORDER BY version DESC LIMIT 1`},
		{&c.insVersion, `INSERT INTO record_versions (record_id, version, marc, staff_id, actor, saved_at) VALUES (?, ?, ?, ?, ?, ?)`},
	} {
		var err error
		if *p.st, err = tx.Prepare(p.q); err != nil {
			return nil, fmt.Errorf("prepare the commit: %w", err)
		}
	}
	return c, nil
}

// replace replaces record id's MARC by rec (source), deriving its fields (an
// undo's restore), and returns the MARC it had. The MARC it had is kept as a
// version when its last version does not hold it (as saveMARC keeps it), then
// the new one. errGone when there is no record id.
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
	if oldSource == source && prev == source {
		return prev, nil // already so: no new version
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
		for _, ids := range chunks(created, 500) {
			in, args := idArgs(ids)
			if _, err := tx.Exec(`DELETE FROM record_redirects WHERE to_id IN (`+in+`)`, args...); err != nil {
				return fmt.Errorf("delete redirects to the batch's records: %w", err)
			}
			if _, err := tx.Exec(`DELETE FROM records WHERE id IN (`+in+`)`, args...); err != nil {
				return fmt.Errorf("delete the batch's records: %w", err)
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
			rec, err := marc.FromXML(o.prev)
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

// stagedRow is a staged record as the commit reads it.
type stagedRow struct {
	pos     int
	source  string
	title   string
	rule    string
	matchID int64
	rec     *marc.Record
	action  string
	// recordID is the record created or overlaid; prev an overlaid record's
	// MARC before.
	recordID int64
	prev     string
	created  bool
}

// page commits the staged records after position last, up to commitPage of
// them, and returns the last position committed and whether there may be
// more. The page's writes are a few statements each (bulk), since on
// PostgreSQL every statement that changes the records moves the catalogue's
// version on, a row updated as many times in the transaction.
func (c *committer) page(im *importer, b *ImportBatch, last int, sum *CommitSummary) (int, bool, error) {
	tx := c.tx
	rows, err := tx.Query(`SELECT position, marc, title, match_rule, coalesce(match_id, 0) FROM import_batch_records
		WHERE batch_id = ? AND error = '' AND position > ? ORDER BY position LIMIT ?`, c.batch, last, commitPage)
	if err != nil {
		return last, false, fmt.Errorf("read batch %d: %w", c.batch, err)
	}
	var page []*stagedRow
	for rows.Next() {
		r := &stagedRow{}
		if err := rows.Scan(&r.pos, &r.source, &r.title, &r.rule, &r.matchID); err != nil {
			rows.Close()
			return last, false, err
		}
		page = append(page, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return last, false, err
	}
	if len(page) == 0 {
		return last, false, nil
	}
	// A record overlaid twice (two records of the file match it) is overlaid
	// once per page: the page ends before the second.
	targets := map[int64]bool{}
	for i, r := range page {
		r.action = ActionNew
		if r.rule != RuleNone {
			r.action = b.Actions[r.rule]
		}
		if r.action == ActionOverlay {
			if targets[r.matchID] {
				page = page[:i]
				break
			}
			targets[r.matchID] = true
		}
	}
	last = page[len(page)-1].pos

	// What the overlaid records are now, and their last versions.
	var overlayIDs []int64
	for _, r := range page {
		if r.action == ActionOverlay {
			overlayIDs = append(overlayIDs, r.matchID)
		}
	}
	type current struct {
		source, updatedAt, lastSource string
		bib                           Bib
		lastVersion                   int
	}
	now := map[int64]*current{}
	for _, ids := range chunks(overlayIDs, 500) {
		in, args := idArgs(ids)
		rows, err := tx.Query(`SELECT id, title, author, isbn, publisher, coalesce(year, 0), subjects, control_number, marc, updated_at FROM records WHERE id IN (`+in+`)`, args...)
		if err != nil {
			return last, false, fmt.Errorf("read the records overlaid: %w", err)
		}
		for rows.Next() {
			var id int64
			var cur current
			var subjects string
			if err := rows.Scan(&id, &cur.bib.Title, &cur.bib.Author, &cur.bib.ISBN, &cur.bib.Publisher, &cur.bib.Year, &subjects, &cur.bib.ControlNumber, &cur.source, &cur.updatedAt); err != nil {
				rows.Close()
				return last, false, err
			}
			cur.bib.Subjects = lines(subjects)
			now[id] = &cur
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return last, false, err
		}
		rows, err = tx.Query(`SELECT v.record_id, v.version, v.marc FROM record_versions v
			JOIN (SELECT record_id, max(version) AS version FROM record_versions WHERE record_id IN (`+in+`) GROUP BY record_id) m
			ON m.record_id = v.record_id AND m.version = v.version`, args...)
		if err != nil {
			return last, false, fmt.Errorf("read the overlaid records' versions: %w", err)
		}
		for rows.Next() {
			var id int64
			var v int
			var source string
			if err := rows.Scan(&id, &v, &source); err != nil {
				rows.Close()
				return last, false, err
			}
			if cur := now[id]; cur != nil {
				cur.lastVersion, cur.lastSource = v, source
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return last, false, err
		}
	}

	if err := tx.QueryRow(`SELECT ` + nextRecordID).Scan(&c.nextID); err != nil {
		return last, false, fmt.Errorf("next record id: %w", err)
	}
	at := db.FormatTime(tx.Now())
	var creates, overlays, versions, outcomes [][]any
	for _, r := range page {
		if r.action == ActionSkip {
			sum.Skipped++
			outcomes = append(outcomes, []any{r.pos, "skipped", nil, nil})
			continue
		}
		if r.rec, err = marc.FromXML(r.source); err != nil {
			return last, false, fmt.Errorf("batch %d record %d: read the staged MARC: %w", c.batch, r.pos, err)
		}
		bib := BibOf(r.rec)
		fields := []any{bib.Title, bib.Author, bib.ISBN, bib.Publisher, nullYear(bib.Year), strings.Join(bib.Subjects, "\n"), bib.ControlNumber, r.source}
		cur := now[r.matchID]
		if r.action == ActionOverlay && cur != nil {
			prev, err := marc.ToXML(keptMARC(cur.bib, cur.source))
			if err != nil {
				return last, false, fmt.Errorf("record %d: keep the previous MARC: %w", r.matchID, err)
			}
			r.recordID, r.prev = r.matchID, prev
			outcomes = append(outcomes, []any{r.pos, "overlaid", r.recordID, prev})
			sum.Overlaid++
			if prev == r.source && cur.source == r.source {
				continue // the same MARC again: no new version, nothing to write
			}
			v := cur.lastVersion
			if v == 0 || (cur.lastSource != prev && cur.lastSource != cur.source) {
				v++
				versions = append(versions, []any{r.recordID, v, prev, nil, "", cur.updatedAt})
			}
			versions = append(versions, []any{r.recordID, v + 1, r.source, c.staff, c.actor.Name, at})
			overlays = append(overlays, append([]any{r.recordID}, append(fields, at)...))
			continue
		}
		// New, or the record matched was deleted since: the import adds it.
		r.recordID, r.created = c.nextID, true
		c.nextID++
		creates = append(creates, append([]any{r.recordID}, append(fields, at, at)...))
		versions = append(versions, []any{r.recordID, 1, r.source, c.staff, c.actor.Name, at})
		outcomes = append(outcomes, []any{r.pos, "created", r.recordID, nil})
		sum.Created++
	}
	if err := bulk(tx, `INSERT INTO records (id, title, author, isbn, publisher, year, subjects, control_number, marc, created_at, updated_at) VALUES `,
		"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "", creates); err != nil {
		return last, false, fmt.Errorf("insert records: %w", err)
	}
	if err := bulk(tx, `UPDATE records SET title = v.column2, author = v.column3, isbn = v.column4, publisher = v.column5, year = v.column6,
		subjects = v.column7, control_number = v.column8, marc = v.column9, updated_at = v.column10 FROM (VALUES `,
		"(CAST(? AS bigint), ?, ?, ?, ?, CAST(? AS bigint), ?, ?, ?, ?)", `) AS v WHERE records.id = v.column1`, overlays); err != nil {
		return last, false, fmt.Errorf("overlay records: %w", err)
	}
	if err := bulk(tx, `INSERT INTO record_versions (record_id, version, marc, staff_id, actor, saved_at) VALUES `,
		"(?, ?, ?, ?, ?, ?)", "", versions); err != nil {
		return last, false, fmt.Errorf("keep versions: %w", err)
	}
	if err := bulk(tx, `UPDATE import_batch_records SET outcome = v.column2, record_id = v.column3, prev_marc = v.column4 FROM (VALUES `,
		"(CAST(? AS bigint), ?, CAST(? AS bigint), ?)", fmt.Sprintf(`) AS v WHERE import_batch_records.batch_id = %d AND import_batch_records.position = v.column1`, c.batch), outcomes); err != nil {
		return last, false, fmt.Errorf("batch %d: outcomes: %w", c.batch, err)
	}
	if err := c.pageCopies(im, page, sum); err != nil {
		return last, false, err
	}
	return last, true, nil
}

// pageCopies adds the holdings of a page's created and overlaid records, as
// the direct import does, with their statuses, remembering each in the batch.
func (c *committer) pageCopies(im *importer, page []*stagedRow, sum *CommitSummary) error {
	type copyRow struct {
		r       *stagedRow
		h       Holding
		barcode string
	}
	var all []copyRow
	var barcodes []any
	for _, r := range page {
		if r.recordID == 0 {
			continue
		}
		holdings := HoldingsOf(r.rec)
		if len(holdings) == 0 && r.created && im.opt.GenerateItems {
			holdings = []Holding{{}}
		}
		for _, h := range holdings {
			barcode := strings.TrimSpace(h.Barcode)
			if barcode == "" {
				var err error
				if barcode, err = im.generateBarcode(); err != nil {
					return err
				}
			}
			all = append(all, copyRow{r, h, barcode})
			barcodes = append(barcodes, barcode)
		}
	}
	owners := map[string]int64{}
	for _, part := range chunks(barcodes, 500) {
		rows, err := c.tx.Query(`SELECT barcode, record_id FROM items WHERE barcode IN (?`+strings.Repeat(", ?", len(part)-1)+`)`, part...)
		if err != nil {
			return fmt.Errorf("look up barcodes: %w", err)
		}
		for rows.Next() {
			var bc string
			var owner int64
			if err := rows.Scan(&bc, &owner); err != nil {
				rows.Close()
				return err
			}
			owners[bc] = owner
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	now := db.FormatTime(c.tx.Now())
	var inserts [][]any
	var added []any
	for _, cr := range all {
		note := func(reason string) {
			sum.Notes = append(sum.Notes, Rejection{Index: cr.r.pos, Title: cr.r.title, Reason: reason})
		}
		if _, err := NormalizeBarcode(cr.barcode); err != nil {
			sum.CopiesSkipped++
			note(fmt.Sprintf("copy skipped: bad barcode %q", cr.barcode))
			continue
		}
		if owner, ok := owners[cr.barcode]; ok {
			if owner != cr.r.recordID {
				sum.CopiesSkipped++
				note(fmt.Sprintf("copy %s skipped: that barcode belongs to another record (%d)", cr.barcode, owner))
			}
			continue
		}
		owners[cr.barcode] = cr.r.recordID
		branch, itype := im.defBranch, im.defType
		if v, ok := im.branches[strings.ToUpper(strings.TrimSpace(cr.h.HomeBranch))]; ok && cr.h.HomeBranch != "" {
			branch = v
		}
		if v, ok := im.itemTypes[strings.ToUpper(strings.TrimSpace(cr.h.ItemType))]; ok && cr.h.ItemType != "" {
			itype = v
		}
		status, reason, snote := ImportedStatus(cr.h)
		var withdrawnAt sql.NullString
		if status == StatusWithdrawn {
			withdrawnAt = sql.NullString{String: now, Valid: true}
		}
		inserts = append(inserts, []any{cr.barcode, cr.r.recordID, branch, branch, itype, strings.TrimSpace(cr.h.CallNumber), importedLocation(cr.h.Location),
			status, withdrawnAt, reason, cr.h.PriceCents, now, now})
		added = append(added, cr.barcode)
		sum.Copies++
		if snote != "" {
			note("copy " + cr.barcode + ": " + snote)
		}
	}
	if err := bulk(c.tx, `INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, call_number, location, status,
		withdrawn_at, withdrawn_reason, price_cents, created_at, updated_at) VALUES `, "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "", inserts); err != nil {
		return fmt.Errorf("insert copies: %w", err)
	}
	for _, part := range chunks(added, 500) {
		if _, err := c.tx.Exec(fmt.Sprintf(`INSERT INTO import_batch_items (batch_id, item_id) SELECT %d, id FROM items WHERE barcode IN (?`, c.batch)+
			strings.Repeat(", ?", len(part)-1)+`)`, part...); err != nil {
			return fmt.Errorf("batch %d: remember the copies: %w", c.batch, err)
		}
	}
	return nil
}

// bulk runs prefix, rows as tuple (one "(?, ...)" each) separated by commas,
// and suffix, for as many rows at a time as keep to 900 parameters.
func bulk(tx *db.Tx, prefix, tuple, suffix string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	per := max(1, 900/len(rows[0]))
	for i := 0; i < len(rows); i += per {
		part := rows[i:min(i+per, len(rows))]
		var q strings.Builder
		q.WriteString(prefix)
		args := make([]any, 0, len(part)*len(rows[0]))
		for j, r := range part {
			if j > 0 {
				q.WriteString(", ")
			}
			q.WriteString(tuple)
			args = append(args, r...)
		}
		q.WriteString(suffix)
		if _, err := tx.Exec(q.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// chunks splits s into parts of at most n.
func chunks[T any](s []T, n int) [][]T {
	var out [][]T
	for i := 0; i < len(s); i += n {
		out = append(out, s[i:min(i+n, len(s))])
	}
	return out
}
