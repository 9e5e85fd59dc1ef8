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
	err := s.DB.Read(ctx, func(tx *db.Tx) (err error) {
		out, err = matches(tx, rec)
		return err
	})
	return out, err
}

// matches finds the records rec may duplicate, by the rules a cataloguer trusts
// in this order: its 001 or an 035 $a (with or without the "(OCoLC)" style
// prefix) as a record's control number, then any of its 020 ISBNs (in either
// the ISBN-10 or ISBN-13 form). Each record is listed once, under the first rule
// that found it.
func matches(tx *db.Tx, rec *marc.Record) ([]Match, error) {
	type probe struct{ column, value, reason string }
	var probes []probe
	if c := strings.TrimSpace(rec.ControlField("001")); c != "" {
		probes = append(probes, probe{"control_number", c, "001 " + c})
	}
	for _, f := range rec.FieldsByTag("035") {
		for _, v := range f.Subs('a') {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			probes = append(probes, probe{"control_number", v, "035 " + v})
			if i := strings.IndexByte(v, ')'); strings.HasPrefix(v, "(") && i > 0 && i < len(v)-1 {
				bare := strings.TrimSpace(v[i+1:])
				probes = append(probes, probe{"control_number", bare, "035 " + v})
			}
		}
	}
	for _, f := range rec.FieldsByTag("020") {
		for _, v := range f.Subs('a') {
			isbn := catalog.NormalizeISBN(v)
			if isbn == "" {
				continue
			}
			for _, form := range isbnForms(isbn) {
				probes = append(probes, probe{"isbn", form, "ISBN " + isbn})
			}
		}
	}
	var out []Match
	seen := map[int64]bool{}
	for _, p := range probes {
		// column is one of two names fixed above, never input.
		rows, err := tx.Query(`SELECT id, title, author FROM records WHERE `+p.column+` = ? AND `+p.column+` <> '' ORDER BY id LIMIT 20`, p.value)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var m Match
			if err := rows.Scan(&m.RecordID, &m.Title, &m.Author); err != nil {
				rows.Close()
				return nil, err
			}
			if !seen[m.RecordID] {
				seen[m.RecordID] = true
				m.Reason = p.reason
				out = append(out, m)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// isbnForms is a normalised ISBN in both forms where it has both: an ISBN-10
// and its 978 ISBN-13 (catalog.ISBNForms gives the other).
func isbnForms(isbn string) []string {
	if other := catalog.ISBNForms(isbn); other[0] != isbn {
		return []string{isbn, other[0]}
	}
	return []string{isbn}
}

// RecordFromXML reads the one MARCXML record in s: a search result carried in
// a form, from the results page to the import.
func RecordFromXML(s string) (*marc.Record, error) {
	rec, err := marc.NewXMLReader(strings.NewReader(s)).Next()
	if errors.Is(err, io.EOF) || rec == nil && err == nil {
		return nil, stacks.Errorf(stacks.EINVALID, "The form carried no MARC record. Search again and choose a result.")
	}
	if err != nil {
		return nil, stacks.Errorf(stacks.EINVALID, "The form's MARC record cannot be read (%v). Search again and choose a result.", err)
	}
	return rec, nil
}
