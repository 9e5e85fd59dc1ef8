package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
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
		c := newCommitter(tx, actor, id)
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

// committer is one batch's commit or undo.
type committer struct {
	tx    *db.Tx
	actor stacks.Actor
	batch int64
	// nextID is the id the next record created gets.
	nextID int64
}

func newCommitter(tx *db.Tx, actor stacks.Actor, batch int64) *committer {
	return &committer{tx: tx, actor: actor, batch: batch}
}

// pageWrite is a page's writes of records and their versions, run as a few
// bulk statements (flush).
type pageWrite struct {
	actor                       stacks.Actor
	at                          string
	creates, overlays, versions [][]any
	// unkeyed are the records whose 035 numbers are written again, keys
	// the numbers written (record_system_numbers).
	unkeyed []int64
	keys    [][]any
}

// replace plans the replacement of record id's MARC (its row and latest
// version now: row) by rec (source), as writeMARC does it: the fields
// derived from rec, the MARC the record had kept as a version first when
// keepsPrevious, then source. It returns the MARC the record had (as
// keptMARC makes it); nothing is written when the record is already so.
func (w *pageWrite) replace(id int64, row *recordRow, rec *marc.Record, source string) (string, error) {
	prev, err := marc.ToXML(row.kept())
	if err != nil {
		return "", fmt.Errorf("record %d: keep the previous MARC: %w", id, err)
	}
	if prev == source && row.source == source {
		return prev, nil // already so: no new version
	}
	v := row.version
	if keepsPrevious(v, row.versionSource, row.source, prev) {
		v++
		w.versions = append(w.versions, []any{id, v, prev, nil, "", row.updatedAt})
	}
	w.versions = append(w.versions, []any{id, v + 1, source, versionStaff(w.actor), w.actor.Name, w.at})
	w.overlays = append(w.overlays, append([]any{id}, append(derivedColumns(rec, source), w.at)...))
	if old, keys := uniqueKeys(row.kept()), uniqueKeys(rec); !slices.Equal(old, keys) {
		if len(old) > 0 {
			w.unkeyed = append(w.unkeyed, id)
		}
		w.key(id, keys)
	}
	return prev, nil
}

// key plans the rows of record id's 035 numbers.
func (w *pageWrite) key(id int64, keys []string) {
	for _, k := range keys {
		w.keys = append(w.keys, []any{k, id})
	}
}

// create plans a new record id of rec (source), its MARC kept as version 1.
func (w *pageWrite) create(id int64, rec *marc.Record, source string) {
	w.creates = append(w.creates, append([]any{id}, append(derivedColumns(rec, source), w.at, w.at)...))
	w.versions = append(w.versions, []any{id, 1, source, versionStaff(w.actor), w.actor.Name, w.at})
	w.key(id, uniqueKeys(rec))
}

// derivedColumns are a record's columns derived from rec, then source.
func derivedColumns(rec *marc.Record, source string) []any {
	b := BibOf(rec)
	return []any{b.Title, b.Author, b.ISBN, b.Publisher, nullYear(b.Year), strings.Join(b.Subjects, "\n"), b.ControlNumber, source}
}

func versionStaff(actor stacks.Actor) sql.NullInt64 {
	return sql.NullInt64{Int64: actor.StaffID, Valid: actor.StaffID != 0}
}

// flush runs the page's writes.
func (w *pageWrite) flush(tx *db.Tx) error {
	if err := bulk(tx, `INSERT INTO records (id, title, author, isbn, publisher, year, subjects, control_number, marc, created_at, updated_at) VALUES `,
		"(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", "", w.creates); err != nil {
		return fmt.Errorf("insert records: %w", err)
	}
	if err := bulk(tx, `UPDATE records SET title = v.column2, author = v.column3, isbn = v.column4, publisher = v.column5, year = v.column6,
		subjects = v.column7, control_number = v.column8, marc = v.column9, updated_at = v.column10 FROM (VALUES `,
		"(CAST(? AS bigint), ?, ?, ?, ?, CAST(? AS bigint), ?, ?, ?, ?)", `) AS v WHERE records.id = v.column1`, w.overlays); err != nil {
		return fmt.Errorf("overlay records: %w", err)
	}
	if err := bulk(tx, `INSERT INTO record_versions (record_id, version, marc, staff_id, actor, saved_at) VALUES `,
		"(?, ?, ?, ?, ?, ?)", "", w.versions); err != nil {
		return fmt.Errorf("keep versions: %w", err)
	}
	for _, ids := range chunks(w.unkeyed, 500) {
		in, args := idArgs(ids)
		if _, err := tx.Exec(`DELETE FROM record_system_numbers WHERE record_id IN (`+in+`)`, args...); err != nil {
			return fmt.Errorf("index the 035 numbers: %w", err)
		}
	}
	return insertSystemNumbers(tx, w.keys)
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
		n, err := restoreOverlaid(tx, actor, id)
		if err != nil {
			return err
		}
		sum.Restored = n
		if _, err := tx.Exec(`UPDATE import_batches SET state = ?, undone_at = ? WHERE id = ?`, BatchUndone, db.FormatTime(tx.Now()), id); err != nil {
			return fmt.Errorf("mark batch %d undone: %w", id, err)
		}
		return tx.Audit(actor, "catalog.import.undo", "import_batch", id, fmt.Sprintf("%q: %d records deleted, %d restored, %d copies deleted",
			b.FileName, sum.Deleted, sum.Restored, sum.CopiesDeleted))
	})
	return sum, err
}

// restoreOverlaid gives the records batch overlaid back the MARC they had
// before it (kept as a new version; the MARC they have now is kept first when
// no version holds it, as writeMARC keeps it), a few bulk statements per 500
// records, and returns how many it restored. A record the file matched twice
// gets back the MARC it had before the first overlay; one deleted since is
// left. A record edited since the import loses the edit from its MARC, which
// its versions keep.
func restoreOverlaid(tx *db.Tx, actor stacks.Actor, batch int64) (int, error) {
	var ids []int64
	first := map[int64]string{}
	rows, err := tx.Query(`SELECT record_id, prev_marc FROM import_batch_records
		WHERE batch_id = ? AND outcome = 'overlaid' ORDER BY position`, batch)
	if err != nil {
		return 0, fmt.Errorf("batch %d: overlaid records: %w", batch, err)
	}
	for rows.Next() {
		var id int64
		var prev string
		if err := rows.Scan(&id, &prev); err != nil {
			rows.Close()
			return 0, err
		}
		if _, ok := first[id]; !ok {
			first[id] = prev
			ids = append(ids, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	restored := 0
	for _, part := range chunks(ids, 500) {
		now, err := readRecordRows(tx, part)
		if err != nil {
			return 0, err
		}
		w := &pageWrite{actor: actor, at: db.FormatTime(tx.Now())}
		for _, id := range part {
			row := now[id]
			if row == nil {
				continue // deleted since: nothing to restore
			}
			rec, err := marc.FromXML(first[id])
			if err != nil {
				return 0, fmt.Errorf("record %d: read the MARC before the import: %w", id, err)
			}
			if _, err := w.replace(id, row, rec, first[id]); err != nil {
				return 0, err
			}
			restored++
		}
		if err := w.flush(tx); err != nil {
			return 0, err
		}
	}
	return restored, nil
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
	now, err := readRecordRows(tx, overlayIDs)
	if err != nil {
		return last, false, fmt.Errorf("read the records overlaid: %w", err)
	}

	if err := tx.QueryRow(`SELECT ` + nextRecordID).Scan(&c.nextID); err != nil {
		return last, false, fmt.Errorf("next record id: %w", err)
	}
	w := &pageWrite{actor: c.actor, at: db.FormatTime(tx.Now())}
	var outcomes [][]any
	for _, r := range page {
		if r.action == ActionSkip {
			sum.Skipped++
			outcomes = append(outcomes, []any{r.pos, "skipped", nil, nil})
			continue
		}
		if r.rec, err = marc.FromXML(r.source); err != nil {
			return last, false, fmt.Errorf("batch %d record %d: read the staged MARC: %w", c.batch, r.pos, err)
		}
		if cur := now[r.matchID]; r.action == ActionOverlay && cur != nil {
			prev, err := w.replace(r.matchID, cur, r.rec, r.source)
			if err != nil {
				return last, false, err
			}
			r.recordID, r.prev = r.matchID, prev
			outcomes = append(outcomes, []any{r.pos, "overlaid", r.recordID, prev})
			sum.Overlaid++
			continue
		}
		// New, or the record matched was deleted since: the import adds it.
		r.recordID, r.created = c.nextID, true
		c.nextID++
		w.create(r.recordID, r.rec, r.source)
		outcomes = append(outcomes, []any{r.pos, "created", r.recordID, nil})
		sum.Created++
	}
	if err := w.flush(tx); err != nil {
		return last, false, err
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
		r         *stagedRow
		h         Holding
		barcode   string
		generated bool
	}
	var all []copyRow
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
			all = append(all, copyRow{r: r, h: h, barcode: barcode, generated: barcode == ""})
		}
	}
	// Who has each barcode now. A generated barcode (M and 8 digits, the
	// importer's next) that is taken is generated again, and looked up with
	// the others of the next round.
	owners := map[string]int64{}
	lookup := make([]int, len(all))
	for i := range all {
		lookup[i] = i
	}
	for len(lookup) > 0 {
		var barcodes []any
		for _, i := range lookup {
			if all[i].generated {
				all[i].barcode = im.nextGenerated()
			}
			barcodes = append(barcodes, all[i].barcode)
		}
		if err := c.owners(barcodes, owners); err != nil {
			return err
		}
		var clashes []int
		for _, i := range lookup {
			if _, taken := owners[all[i].barcode]; taken && all[i].generated {
				clashes = append(clashes, i)
			}
		}
		lookup = clashes
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

// owners adds the records that have barcodes (those that exist) to owners,
// a statement per 500.
func (c *committer) owners(barcodes []any, owners map[string]int64) error {
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
