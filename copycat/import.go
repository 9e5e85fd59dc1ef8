package copycat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// Match is an existing record an imported one may be a copy of.
type Match struct {
	RecordID int64
	Title    string
	Author   string
	// Reason is the rule that matched: "001 11224466", "035 (OCoLC)12345",
	// "ISBN 9780201896831".
	Reason string
}

// ImportMode says what Import does with a record that matches existing ones.
type ImportMode int

const (
	// ImportIfNew creates the record unless it matches one: then it changes
	// nothing and returns the matches, for the cataloguer to choose.
	ImportIfNew ImportMode = iota
	// ImportAdd creates the record even if it matches (a second edition that
	// shares a control number, say).
	ImportAdd
	// ImportOverlay replaces an existing record's MARC by the imported one,
	// keeping its copies and holds.
	ImportOverlay
)

// ImportResult is what Import did.
type ImportResult struct {
	// RecordID is the record created or overlaid; 0 when Matches stopped it.
	RecordID int64
	Created  bool
	Matches  []Match
}

// Import stores rec, found at the target named origin, in the catalogue as
// mode says (overlay names the record an ImportOverlay replaces). Matching and
// writing happen in one transaction.
func (s *Service) Import(ctx context.Context, actor stacks.Actor, rec *marc.Record, origin string, mode ImportMode, overlay int64) (ImportResult, error) {
	var res ImportResult
	origin = strings.TrimSpace(origin)
	if !utf8.ValidString(origin) || strings.ContainsFunc(origin, isControl) || len(origin) > 100 {
		return res, stacks.Errorf(stacks.EINVALID, "The name of the target the record came from is not readable text. Search again and choose a result.")
	}
	from := "copy cataloguing"
	if origin != "" {
		from += " (" + origin + ")"
	}
	// Matching by 035 reads the catalogue's index of them, built first if a
	// library's records predate it.
	if err := catalog.BuildSystemNumbers(ctx, s.DB); err != nil {
		return ImportResult{}, err
	}
	err := s.DB.Write(ctx, func(tx *db.Tx) (err error) {
		res = ImportResult{}
		switch mode {
		case ImportIfNew:
			if res.Matches, err = matches(tx, rec); err != nil || len(res.Matches) > 0 {
				return err
			}
			fallthrough
		case ImportAdd:
			res.RecordID, err = catalog.CreateRecordFromMARC(tx, actor, rec, from)
			res.Created = err == nil
			return err
		case ImportOverlay:
			res.RecordID = overlay
			return catalog.OverlayRecordFromMARC(tx, actor, overlay, rec, from)
		}
		return fmt.Errorf("copycat: unknown import mode %d", mode)
	})
	if err != nil {
		return ImportResult{}, err
	}
	return res, nil
}

// Matches lists the records rec may be a copy of (see matches).
func (s *Service) Matches(ctx context.Context, rec *marc.Record) ([]Match, error) {
	var out []Match
	if err := catalog.BuildSystemNumbers(ctx, s.DB); err != nil {
		return nil, err
	}
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		out, err = matches(tx, rec)
		return err
	})
	return out, err
}

// matches finds the records rec may duplicate, by catalog.Matcher's rules:
// its 001 as a record's control number, an 035 $a as one of a record's 035 $a,
// then any of its 020 ISBNs in either the ISBN-10 or the ISBN-13 form. Each
// record is listed once, under the first rule that found it; at most
// maxMatches are listed.
func matches(tx *db.Tx, rec *marc.Record) ([]Match, error) {
	m := catalog.NewMatcher()
	if err := m.Prefetch(tx, []*marc.Record{rec}); err != nil {
		return nil, err
	}
	found := m.Matches(rec)
	if len(found) > maxMatches {
		found = found[:maxMatches]
	}
	if len(found) == 0 {
		return nil, nil
	}
	ids := make([]any, len(found))
	for i, f := range found {
		ids[i] = f.RecordID
	}
	rows, err := tx.Query(`SELECT id, title, author FROM records WHERE id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, ids...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names := map[int64][2]string{}
	for rows.Next() {
		var id int64
		var title, author string
		if err := rows.Scan(&id, &title, &author); err != nil {
			return nil, err
		}
		names[id] = [2]string{title, author}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Match, 0, len(found))
	for _, f := range found {
		out = append(out, Match{RecordID: f.RecordID, Title: names[f.RecordID][0], Author: names[f.RecordID][1], Reason: matchReason(f)})
	}
	return out, nil
}

// maxMatches bounds the matches listed for one record.
const maxMatches = 20

// matchReason is how the cataloguer reads the rule that matched and its key:
// "001 11224466", "035 (OCoLC)12345", "ISBN 9780201896831".
func matchReason(f catalog.RecordMatch) string {
	name, ok := ruleNames[f.Rule]
	if !ok {
		name = f.Rule
	}
	return name + " " + f.Key
}

// ruleNames are the words for each match rule: the MARC tag it reads, or ISBN.
var ruleNames = map[string]string{
	catalog.RuleControl: "001",
	catalog.RuleSystem:  "035",
	catalog.RuleISBN:    "ISBN",
}

// RecordFromXML reads the one MARCXML record in s: a search result carried in
// a form, from the results page to the import.
func RecordFromXML(s string) (*marc.Record, error) {
	rec, err := marc.FromXML(s)
	if errors.Is(err, io.EOF) || rec == nil && err == nil {
		return nil, stacks.Errorf(stacks.EINVALID, "The form carried no MARC record. Search again and choose a result.")
	}
	if err != nil {
		return nil, stacks.Errorf(stacks.EINVALID, "The form's MARC record cannot be read (%v). Search again and choose a result.", err)
	}
	return rec, nil
}
