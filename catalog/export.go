package catalog

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// Export formats.
const (
	FormatMARCXML = "marcxml"
	FormatISO2709 = "iso2709"
)

type exportCopy struct {
	barcode, home, current, itemType, callNumber, location string
	priceCents                                             int64
}

// Export writes every record of the catalogue as MARC 21, with its copies as Koha
// 952 fields ($a home branch, $b current branch, $c shelving location, $o call
// number, $p barcode, $y item type, $g price), reading in batches. Each record is
// written from its kept MARC, as imported and edited, its own holdings fields
// replaced by the current copies. Importing the export gives the same records.
func Export(ctx context.Context, d *db.DB, w io.Writer, format string) (int, error) {
	var write func(*marc.Record) error
	var xw *marc.XMLWriter
	switch format {
	case FormatMARCXML:
		xw = marc.NewXMLWriter(w)
		write = xw.Write
	case FormatISO2709:
		write = func(r *marc.Record) error { return marc.WriteISO2709(w, r) }
	default:
		return 0, fmt.Errorf("unknown export format %q: use %s or %s", format, FormatMARCXML, FormatISO2709)
	}
	n := 0
	var last int64
	for {
		type row struct {
			id     int64
			bib    Bib
			source string
			copies []exportCopy
		}
		var batch []*row
		err := d.Read(ctx, func(tx *db.Tx) error {
			rows, err := tx.Query(`SELECT id, title, author, isbn, publisher, coalesce(year, 0), subjects, control_number, marc
				FROM records WHERE id > ? ORDER BY id LIMIT 1000`, last)
			if err != nil {
				return err
			}
			index := map[int64]*row{}
			for rows.Next() {
				r := &row{}
				var subjects string
				if err := rows.Scan(&r.id, &r.bib.Title, &r.bib.Author, &r.bib.ISBN, &r.bib.Publisher, &r.bib.Year, &subjects, &r.bib.ControlNumber, &r.source); err != nil {
					rows.Close()
					return err
				}
				for _, s := range strings.Split(subjects, "\n") {
					if s = strings.TrimSpace(s); s != "" {
						r.bib.Subjects = append(r.bib.Subjects, s)
					}
				}
				batch = append(batch, r)
				index[r.id] = r
			}
			rows.Close()
			if err := rows.Err(); err != nil || len(batch) == 0 {
				return err
			}
			irows, err := tx.Query(`SELECT i.record_id, i.barcode, hb.code, cb.code, t.code, i.call_number, i.location, i.price_cents
				FROM items i JOIN branches hb ON hb.id = i.home_branch_id JOIN branches cb ON cb.id = i.current_branch_id
				JOIN item_types t ON t.id = i.item_type_id
				WHERE i.record_id > ? AND i.record_id <= ? ORDER BY i.record_id, i.id`, last, batch[len(batch)-1].id)
			if err != nil {
				return err
			}
			defer irows.Close()
			for irows.Next() {
				var rid int64
				var c exportCopy
				if err := irows.Scan(&rid, &c.barcode, &c.home, &c.current, &c.itemType, &c.callNumber, &c.location, &c.priceCents); err != nil {
					return err
				}
				if r := index[rid]; r != nil {
					r.copies = append(r.copies, c)
				}
			}
			return irows.Err()
		})
		if err != nil {
			return n, fmt.Errorf("export: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		for _, r := range batch {
			rec, err := exportRecord(r.bib, r.source, r.copies)
			if err != nil {
				return n, fmt.Errorf("export record %d: %w", r.id, err)
			}
			if err := write(rec); err != nil {
				return n, fmt.Errorf("export record %d: %w", r.id, err)
			}
			n++
		}
		last = batch[len(batch)-1].id
	}
	if xw != nil {
		if err := xw.Close(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// exportRecord is a record as Export writes it: its kept MARC (keptMARC), its
// own holdings fields replaced by its current copies.
func exportRecord(b Bib, source string, copies []exportCopy) (*marc.Record, error) {
	rec := keptMARC(b, source)
	fields := rec.Fields[:0:0]
	for _, f := range rec.Fields {
		if f.Tag != "952" && f.Tag != "852" && f.Tag != "949" {
			fields = append(fields, f)
		}
	}
	for _, c := range copies {
		sf := []marc.Subfield{{Code: 'a', Value: c.home}, {Code: 'b', Value: c.current}}
		if c.location != "" {
			sf = append(sf, marc.Subfield{Code: 'c', Value: c.location})
		}
		if c.callNumber != "" {
			sf = append(sf, marc.Subfield{Code: 'o', Value: c.callNumber})
		}
		sf = append(sf, marc.Subfield{Code: 'p', Value: c.barcode}, marc.Subfield{Code: 'y', Value: c.itemType})
		if c.priceCents > 0 {
			sf = append(sf, marc.Subfield{Code: 'g', Value: fmt.Sprintf("%d.%02d", c.priceCents/100, c.priceCents%100)})
		}
		fields = append(fields, marc.Field{Tag: "952", Ind1: ' ', Ind2: ' ', Subfields: sf})
	}
	rec.Fields = fields
	return rec, nil
}

// bibFields makes MARC fields from the catalogue's fields.
func bibFields(b Bib) []marc.Field {
	var fs []marc.Field
	if b.ControlNumber != "" {
		fs = append(fs, marc.Field{Tag: "001", Value: b.ControlNumber})
	}
	if b.ISBN != "" {
		fs = append(fs, marc.Field{Tag: "020", Ind1: ' ', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: b.ISBN}}})
	}
	if b.Author != "" {
		fs = append(fs, marc.Field{Tag: "100", Ind1: '1', Ind2: ' ', Subfields: []marc.Subfield{{Code: 'a', Value: b.Author}}})
	}
	fs = append(fs, marc.Field{Tag: "245", Ind1: '1', Ind2: '0', Subfields: []marc.Subfield{{Code: 'a', Value: b.Title}}})
	if b.Publisher != "" || b.Year > 0 {
		var sf []marc.Subfield
		if b.Publisher != "" {
			sf = append(sf, marc.Subfield{Code: 'b', Value: b.Publisher})
		}
		if b.Year > 0 {
			sf = append(sf, marc.Subfield{Code: 'c', Value: strconv.Itoa(b.Year)})
		}
		fs = append(fs, marc.Field{Tag: "264", Ind1: ' ', Ind2: '1', Subfields: sf})
	}
	for _, s := range b.Subjects {
		parts := strings.Split(s, " -- ")
		sf := []marc.Subfield{{Code: 'a', Value: parts[0]}}
		for _, p := range parts[1:] {
			sf = append(sf, marc.Subfield{Code: 'x', Value: p})
		}
		fs = append(fs, marc.Field{Tag: "650", Ind1: ' ', Ind2: '0', Subfields: sf})
	}
	return fs
}
