package reports

import (
	"encoding/csv"
	"io"
	"strings"
)

// WriteCSV writes the result as CSV (RFC 4180: comma-separated, fields with
// commas, quotes or line breaks quoted, CRLF line ends) in UTF-8 without a byte
// order mark, the column names in the first row.
//
// A text cell that a spreadsheet would take for a formula (it starts with =, +,
// - or @) gets a leading apostrophe, so that a title or a patron's name typed as
// "=HYPERLINK(...)" opens as text; numeric columns are written as they are.
func WriteCSV(w io.Writer, res Result) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	head := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		head[i] = c.Name
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	rec := make([]string, len(res.Columns))
	for _, row := range res.Rows {
		for i := range rec {
			rec[i] = ""
			if i < len(row) {
				rec[i] = row[i]
				if !res.Columns[i].Numeric && strings.ContainsAny(firstByte(row[i]), "=+-@\t\r") {
					rec[i] = "'" + row[i]
				}
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func firstByte(s string) string {
	if s == "" {
		return ""
	}
	return s[:1]
}
