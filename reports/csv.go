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
	c := NewCSVWriter(w)
	for _, row := range res.Rows {
		if err := c.Row(res.Columns, row); err != nil {
			return err
		}
	}
	return c.Close(res.Columns)
}

// CSVWriter writes a report as CSV (as WriteCSV does) row by row, as the report
// reads them: set Row as the report's Filter.Emit. The header row goes first,
// with the first row or, for a report with none, at Close.
type CSVWriter struct {
	cw      *csv.Writer
	started bool
	rec     []string
}

// NewCSVWriter returns a CSVWriter on w.
func NewCSVWriter(w io.Writer) *CSVWriter {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	return &CSVWriter{cw: cw}
}

// Row writes one row of a report with the columns cols.
func (c *CSVWriter) Row(cols []Column, row []string) error {
	if err := c.header(cols); err != nil {
		return err
	}
	c.rec = c.rec[:0]
	for i, col := range cols {
		v := ""
		if i < len(row) {
			v = row[i]
			if !col.Numeric && strings.ContainsAny(firstByte(v), "=+-@\t\r") {
				v = "'" + v
			}
		}
		c.rec = append(c.rec, v)
	}
	return c.cw.Write(c.rec)
}

// Close writes the header row if no row was written, and flushes.
func (c *CSVWriter) Close(cols []Column) error {
	if err := c.header(cols); err != nil {
		return err
	}
	c.cw.Flush()
	return c.cw.Error()
}

func (c *CSVWriter) header(cols []Column) error {
	if c.started {
		return nil
	}
	c.started = true
	head := make([]string, len(cols))
	for i, col := range cols {
		head[i] = col.Name
	}
	return c.cw.Write(head)
}

func firstByte(s string) string {
	if s == "" {
		return ""
	}
	return s[:1]
}
