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

// Merging joins two records of one title (a migration or an import leaves
// duplicates): the record kept takes the other's copies and holds, and,
// optionally, chosen fields of its MARC; the other is deleted (OAI-PMH reports
// it so) and its permanent link leads to the record kept (record_redirects).

// MergeResult is what a merge did.
type MergeResult struct {
	Kept, Merged int64
	CopiesMoved  int
	HoldsMoved   int
	// HoldsCancelled counts the holds cancelled because their patron had one
	// on each record: the patron keeps the other.
	HoldsCancelled int
	// FieldsTaken are the MARC tags taken from the merged record.
	FieldsTaken []string
}

// MergeRecords merges record mergeID into record keepID: mergeID's copies and
// holds (open and closed) move to keepID, the queued holds of both joining in
// one queue in the order they were placed; a patron with an open hold on each
// keeps one (the trapped one, or the one on the record kept). The MARC fields
// of the tags takeTags replace keepID's fields of those tags, and the
// catalogue's fields are read again from the result. mergeID is then deleted
// and its link redirects to keepID.
func (s *Service) MergeRecords(ctx context.Context, actor stacks.Actor, keepID, mergeID int64, takeTags []string) (res MergeResult, err error) {
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		res, err = mergeRecords(tx, actor, keepID, mergeID, takeTags)
		return err
	})
	return res, err
}

func mergeRecords(tx *db.Tx, actor stacks.Actor, keepID, mergeID int64, takeTags []string) (MergeResult, error) {
	res := MergeResult{Kept: keepID, Merged: mergeID}
	if keepID == mergeID {
		return res, stacks.FieldErrorf("merge", stacks.EINVALID, "Name two different records: a record cannot be merged into itself.")
	}
	var keepTitle, keepMARC, mergeTitle, mergeMARC string
	for _, r := range []struct {
		id            int64
		title, source *string
	}{{keepID, &keepTitle, &keepMARC}, {mergeID, &mergeTitle, &mergeMARC}} {
		err := tx.QueryRow(`SELECT title, marc FROM records WHERE id = ?`, r.id).Scan(r.title, r.source)
		if errors.Is(err, sql.ErrNoRows) {
			return res, stacks.FieldErrorf("merge", stacks.ENOTFOUND, "There is no record %d. Check the record number.", r.id)
		} else if err != nil {
			return res, fmt.Errorf("find record %d: %w", r.id, err)
		}
	}
	if len(takeTags) > 0 {
		if err := takeFields(tx, keepID, keepMARC, mergeMARC, takeTags); err != nil {
			return res, err
		}
		res.FieldsTaken = takeTags
	}
	now := db.FormatTime(tx.Now())
	r, err := tx.Exec(`UPDATE items SET record_id = ?, updated_at = ? WHERE record_id = ?`, keepID, now, mergeID)
	if err != nil {
		return res, fmt.Errorf("move the copies of record %d: %w", mergeID, err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return res, err
	}
	res.CopiesMoved = int(n)

	// One open hold a patron: a queued hold on the merged record beside an open
	// one on the kept record goes, and a queued hold on the kept record beside
	// a trapped one on the merged record (whose copy is set aside) goes.
	dups, err := tx.IDs(`SELECT m.id FROM holds m WHERE m.record_id = ?1 AND m.status = 'queued'
			AND EXISTS (SELECT 1 FROM holds k WHERE k.record_id = ?2 AND k.patron_id = m.patron_id AND k.status IN ('queued', 'in_transit', 'waiting'))
		UNION
		SELECT k.id FROM holds k WHERE k.record_id = ?2 AND k.status = 'queued'
			AND EXISTS (SELECT 1 FROM holds m WHERE m.record_id = ?1 AND m.patron_id = k.patron_id AND m.status IN ('in_transit', 'waiting'))
		ORDER BY 1`, mergeID, keepID)
	if err != nil {
		return res, fmt.Errorf("find duplicate holds: %w", err)
	}
	if err := cancelHolds(tx, actor, dups, fmt.Sprintf("Records %d and %d were merged: the patron's other hold on the title stays.", keepID, mergeID)); err != nil {
		return res, err
	}
	res.HoldsCancelled = len(dups)
	var open int
	if err := tx.QueryRow(`SELECT count(*) FROM holds WHERE record_id = ? AND status IN ('queued', 'in_transit', 'waiting')`, mergeID).Scan(&open); err != nil {
		return res, fmt.Errorf("count holds of record %d: %w", mergeID, err)
	}
	if err := moveHolds(tx, mergeID, keepID); err != nil {
		return res, err
	}
	res.HoldsMoved = open
	// The reports count loans by title.
	if _, err := tx.Exec(`UPDATE loan_titles SET record_id = ? WHERE record_id = ?`, keepID, mergeID); err != nil {
		return res, fmt.Errorf("move the loan counts of record %d: %w", mergeID, err)
	}
	if _, err := tx.Exec(`UPDATE record_redirects SET to_id = ? WHERE to_id = ?`, keepID, mergeID); err != nil {
		return res, fmt.Errorf("redirect the records merged into record %d: %w", mergeID, err)
	}
	if _, err := tx.Exec(`INSERT INTO record_redirects (from_id, to_id, merged_at) VALUES (?, ?, ?)`, mergeID, keepID, now); err != nil {
		return res, fmt.Errorf("redirect record %d: %w", mergeID, err)
	}
	if _, err := tx.Exec(`DELETE FROM records WHERE id = ?`, mergeID); err != nil {
		return res, fmt.Errorf("delete record %d: %w", mergeID, err)
	}
	detail := fmt.Sprintf("record %d %q merged into record %d %q: %s, %s moved, %s cancelled as duplicates",
		mergeID, mergeTitle, keepID, keepTitle, plural(res.CopiesMoved, "copy", "copies"), plural(res.HoldsMoved, "open hold", "open holds"),
		plural(res.HoldsCancelled, "hold", "holds"))
	if len(takeTags) > 0 {
		detail += "; fields taken: " + strings.Join(takeTags, ", ")
	}
	if err := tx.Audit(actor, "record.merge", "record", keepID, detail); err != nil {
		return res, err
	}
	return res, tx.Audit(actor, "record.merged", "record", mergeID, detail)
}

// takeFields replaces record keepID's MARC fields of the tags with those of
// mergeMARC (placed in tag order), and reads the catalogue's fields again from
// the result, so that the two agree.
func takeFields(tx *db.Tx, keepID int64, keepMARC, mergeMARC string, tags []string) error {
	for _, t := range tags {
		if len(t) != 3 || strings.Trim(t, "0123456789") != "" || t == "000" {
			return stacks.FieldErrorf("fields", stacks.EINVALID, "%q is not a MARC tag: tags are three digits, such as 245 or 650.", t)
		}
	}
	if keepMARC == "" || mergeMARC == "" {
		return stacks.FieldErrorf("fields", stacks.EINVALID, "Fields can be taken only between records that keep their MARC (imported or catalogued as MARC); merge without taking fields, then edit the record kept.")
	}
	keep, err := marc.FromXML(keepMARC)
	if err != nil {
		return fmt.Errorf("read the MARC of record %d: %w", keepID, err)
	}
	other, err := marc.FromXML(mergeMARC)
	if err != nil {
		return fmt.Errorf("read the MARC of the merged record: %w", err)
	}
	oldKeys := uniqueKeys(keep)
	var fields []marc.Field
	for _, f := range keep.Fields {
		if !slices.Contains(tags, f.Tag) {
			fields = append(fields, f)
		}
	}
	for _, f := range other.Fields {
		if !slices.Contains(tags, f.Tag) {
			continue
		}
		// After the last field of a tag not above f's: tag order, and f's
		// fields in their order.
		at := len(fields)
		for i, g := range fields {
			if g.Tag > f.Tag {
				at = i
				break
			}
		}
		fields = slices.Insert(fields, at, f)
	}
	keep.Fields = fields
	b := BibOf(keep)
	if b.Title == "" {
		return stacks.FieldErrorf("fields", stacks.EINVALID, "The record would have no title (245 $a): take 245 from the other record, or keep the record's own.")
	}
	source, err := marc.ToXML(keep)
	if err != nil {
		return stacks.FieldErrorf("fields", stacks.EINVALID, "The fields taken do not make a valid MARC record: %v", err)
	}
	var year sql.NullInt64
	if b.Year != 0 {
		year = sql.NullInt64{Int64: int64(b.Year), Valid: true}
	}
	_, err = tx.Exec(`UPDATE records SET title = ?, author = ?, isbn = ?, publisher = ?, year = ?, subjects = ?, control_number = ?, marc = ?, updated_at = ? WHERE id = ?`,
		b.Title, b.Author, b.ISBN, b.Publisher, year, strings.Join(b.Subjects, "\n"), b.ControlNumber, source, db.FormatTime(tx.Now()), keepID)
	if err != nil {
		return fmt.Errorf("update record %d: %w", keepID, err)
	}
	return setSystemNumbers(tx, keepID, oldKeys, keep)
}

// MergePreview is what merging two records would do, for the confirmation page.
type MergePreview struct {
	Keep, Merge             *Record
	KeepCopies, MergeCopies []CopyStatus
	KeepHolds, MergeHolds   int
	// MergeTags are the data field tags of the merged record's MARC, which may
	// be taken; empty when either record keeps no MARC.
	MergeTags []string
}

// MergePreview reads records keepID and mergeID for the merge's confirmation.
func (s *Service) MergePreview(ctx context.Context, keepID, mergeID int64) (p MergePreview, err error) {
	if keepID == mergeID {
		return p, stacks.FieldErrorf("merge", stacks.EINVALID, "Name two different records: a record cannot be merged into itself.")
	}
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		if p.Keep, p.KeepCopies, err = FindRecord(tx, keepID); err != nil {
			return err
		}
		if p.Merge, p.MergeCopies, err = FindRecord(tx, mergeID); err != nil {
			return err
		}
		err := tx.QueryRow(`SELECT (SELECT count(*) FROM holds WHERE record_id = ?1 AND status IN ('queued', 'in_transit', 'waiting')),
			(SELECT count(*) FROM holds WHERE record_id = ?2 AND status IN ('queued', 'in_transit', 'waiting'))`, keepID, mergeID).Scan(&p.KeepHolds, &p.MergeHolds)
		if err != nil {
			return fmt.Errorf("count holds: %w", err)
		}
		if p.Keep.MARC == "" || p.Merge.MARC == "" {
			return nil
		}
		m, err := marc.FromXML(p.Merge.MARC)
		if err != nil {
			return nil // the merge itself says so if fields are asked for
		}
		for _, f := range m.Fields {
			if !f.IsControl() && !slices.Contains(p.MergeTags, f.Tag) {
				p.MergeTags = append(p.MergeTags, f.Tag)
			}
		}
		slices.Sort(p.MergeTags)
		return nil
	})
	return p, err
}

// RecordRedirect returns the record that record id was merged into (the last
// one kept, when that one was merged again), or 0 when id was not merged.
func (s *Service) RecordRedirect(ctx context.Context, id int64) (to int64, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		err := tx.QueryRow(`SELECT to_id FROM record_redirects WHERE from_id = ?`, id).Scan(&to)
		if errors.Is(err, sql.ErrNoRows) {
			to = 0
			return nil
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("find where record %d went: %w", id, err)
	}
	return to, nil
}
