package catalog

import (
	"context"
	"slices"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// MARCEdit is what the MARC editor shows of a record: its text in the mnemonic
// syntax, its latest version (the edit is saved only if no one saved another
// since) and its versions.
type MARCEdit struct {
	RecordID int64
	Title    string
	Text     string
	Version  int
	Versions []RecordVersion
}

// MARCEdit reads record id for the MARC editor.
func (s *Service) MARCEdit(ctx context.Context, id int64) (e MARCEdit, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		rec, err := RecordMARC(tx, id)
		if err != nil {
			return err
		}
		e = MARCEdit{RecordID: id, Title: BibOf(rec).Title, Text: marc.FormatText(rec)}
		if e.Versions, err = RecordVersions(tx, id); err != nil {
			return err
		}
		if len(e.Versions) > 0 {
			e.Version = e.Versions[0].Version
		}
		return nil
	})
	return e, err
}

// ErrLines is a MARC editor's text that does not parse: the faults, a line each.
type ErrLines []marc.LineError

func (e ErrLines) Error() string {
	if len(e) == 0 {
		return "the MARC text has faults"
	}
	return e[0].Error()
}

// parseEdit reads the editor's text, returning ErrLines for faulty lines, or
// checkMARC's error.
func parseEdit(text string) (*marc.Record, error) {
	rec, errs := marc.ParseText(text)
	if errs != nil {
		return nil, ErrLines(errs)
	}
	return rec, checkMARC(rec)
}

// MARCPreview is what saving the editor's text would change in a record.
type MARCPreview struct {
	// Title is the record's as it is ("" for a new record).
	Title string
	Diff  MARCDiff
}

// PreviewMARC compares the editor's text with record id's MARC (with an empty
// record when id is 0, a new record): the diff a save would make.
func (s *Service) PreviewMARC(ctx context.Context, id int64, text string) (MARCPreview, error) {
	rec, err := parseEdit(text)
	if err != nil {
		return MARCPreview{}, err
	}
	if id == 0 {
		return MARCPreview{Diff: DiffMARC(nil, dropEmpty(rec))}, nil
	}
	var p MARCPreview
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		old, err := RecordMARC(tx, id)
		if err != nil {
			return err
		}
		p = MARCPreview{Title: BibOf(old).Title, Diff: DiffMARC(old, rec)}
		return nil
	})
	return p, err
}

// SaveMARCText saves the editor's text as record id's MARC, provided the
// record's latest version is still base (the one the cataloguer edited).
func (s *Service) SaveMARCText(ctx context.Context, actor stacks.Actor, id int64, text string, base int) error {
	rec, err := parseEdit(text)
	if err != nil {
		return err
	}
	return s.DB.Write(ctx, func(tx *db.Tx) error { return SaveMARC(tx, actor, id, rec, base) })
}

// dropEmpty removes the empty subfields of a new record's data fields, and
// the fields left without any: what a template's text leaves unfilled.
func dropEmpty(rec *marc.Record) *marc.Record {
	out := &marc.Record{Leader: rec.Leader}
	for _, f := range rec.Fields {
		if !f.IsControl() {
			f.Subfields = slices.DeleteFunc(slices.Clone(f.Subfields), func(s marc.Subfield) bool { return s.Value == "" })
			if len(f.Subfields) == 0 {
				continue
			}
		}
		out.Fields = append(out.Fields, f)
	}
	return out
}

// CreateRecordText adds a record from the editor's text (a template filled
// in, or typed from scratch), without the subfields left empty, and returns
// its id.
func (s *Service) CreateRecordText(ctx context.Context, actor stacks.Actor, text string) (id int64, err error) {
	rec, err := parseEdit(text)
	if err != nil {
		return 0, err
	}
	rec = dropEmpty(rec)
	err = s.DB.Write(ctx, func(tx *db.Tx) error {
		id, err = CreateRecordMARC(tx, actor, rec)
		return err
	})
	return id, err
}

// MARCVersions is a record's list of versions and, when one is chosen,
// what restoring it would change.
type MARCVersions struct {
	Title    string
	Versions []RecordVersion
	// Diff compares the record as it is with the version chosen (nil if none).
	Diff MARCDiff
}

// VersionPreview reads record id's versions and, if v is not 0, compares
// version v with the record's MARC: what restoring it would change.
func (s *Service) VersionPreview(ctx context.Context, id int64, v int) (out MARCVersions, err error) {
	err = s.DB.Read(ctx, func(tx *db.Tx) error {
		cur, err := RecordMARC(tx, id)
		if err != nil {
			return err
		}
		out.Title = BibOf(cur).Title
		if out.Versions, err = RecordVersions(tx, id); err != nil || v == 0 {
			return err
		}
		old, err := RecordVersionMARC(tx, id, v)
		out.Diff = DiffMARC(cur, old)
		return err
	})
	return out, err
}

// RestoreVersion saves version v of record id as its MARC.
func (s *Service) RestoreVersion(ctx context.Context, actor stacks.Actor, id int64, v int) error {
	return s.DB.Write(ctx, func(tx *db.Tx) error { return RestoreVersion(tx, actor, id, v) })
}
