package reports

import (
	"bufio"
	"io"
	"strings"
)

// WriteCSV writes the result as CSV (RFC 4180: comma-separated, CRLF line ends)
// in UTF-8 without a byte order mark, the column names in the first row. Every
// CSV file Stacks sends is written here, cell by cell through CSVCell.
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
	w       *bufio.Writer
	started bool
}

// NewCSVWriter returns a CSVWriter on w.
func NewCSVWriter(w io.Writer) *CSVWriter {
	return &CSVWriter{w: bufio.NewWriter(w)}
}

// Row writes one row of a report with the columns cols.
func (c *CSVWriter) Row(cols []Column, row []string) error {
	if err := c.header(cols); err != nil {
		return err
	}
	for i, col := range cols {
		v := ""
		if i < len(row) {
			v = row[i]
		}
		if col.Numeric && plainNumber(v) {
			c.cell(i, v)
		} else {
			c.cell(i, CSVCell(v))
		}
	}
	_, err := c.w.WriteString("\r\n")
	return err
}

// Close writes the header row if no row was written, and flushes.
func (c *CSVWriter) Close(cols []Column) error {
	if err := c.header(cols); err != nil {
		return err
	}
	return c.w.Flush()
}

func (c *CSVWriter) header(cols []Column) error {
	if c.started {
		return nil
	}
	c.started = true
	for i, col := range cols {
		c.cell(i, CSVCell(col.Name))
	}
	_, err := c.w.WriteString("\r\n")
	return err
}

// cell writes the i-th field of a line, already made safe by CSVCell.
func (c *CSVWriter) cell(i int, v string) {
	if i > 0 {
		c.w.WriteByte(',')
	}
	c.w.WriteString(v)
}

// csvSeparators are the characters a spreadsheet may split a line at when it
// opens a CSV file: the comma, the semicolon (Excel's list separator in most
// of Europe), the tab (a .txt or .tsv file, or LibreOffice's import dialog)
// and the pipe (a common "other" separator), and the line breaks, where a
// spreadsheet that did not see a quoted field begins a new row.
const csvSeparators = ",;\t|\r\n"

// csvFormulaStart are the characters that make a spreadsheet take a field for
// a formula (OWASP's list: = + - @, and the tab and carriage return that some
// spreadsheets skip before one).
const csvFormulaStart = "=+-@\t\r"

// CSVCell returns the text v as one field of a CSV line that no spreadsheet
// opens as a formula, whichever separator it splits the line at.
//
// A spreadsheet told to use the semicolon splits a comma-separated line at
// every semicolon, inside a cell or not, and a field starting with = is a
// formula there: a surname "Doe;=1+1;" becomes three fields, the second one a
// formula. So every place a field can begin under some separator (the start of
// the cell, and the character after each comma, semicolon, tab, pipe or line
// break in it) is looked at: if, past any spaces and double quotes (which a
// spreadsheet may trim, or take for the start of a quoted field), it starts
// with = + - @ tab or CR, an apostrophe goes in at that place, which every
// spreadsheet shows as text. A cell containing a separator, a double quote, a
// line break, or a space at either end is quoted (RFC 4180, the quotes inside
// doubled), so that a spreadsheet reading with that separator keeps it whole.
func CSVCell(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 2)
	for i := 0; i < len(v); i++ {
		if (i == 0 || strings.IndexByte(csvSeparators, v[i-1]) >= 0) && formulaAt(v[i:]) {
			b.WriteByte('\'')
		}
		b.WriteByte(v[i])
	}
	s := b.String()
	if s == "" || !strings.ContainsAny(s, csvSeparators+`"`) && s[0] != ' ' && s[len(s)-1] != ' ' {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// formulaAt reports whether a field beginning at s would be a formula: past
// any spaces and double quotes, s starts with one of csvFormulaStart.
func formulaAt(s string) bool {
	t := strings.TrimLeft(s, ` "`)
	return t != "" && strings.IndexByte(csvFormulaStart, t[0]) >= 0
}

// plainNumber reports whether v is a number as a numeric column writes it
// (digits, an optional leading minus, point and exponent): such a cell is
// written as it is, so that a spreadsheet reads it as the number; anything
// else in a numeric column is text and goes through CSVCell.
func plainNumber(v string) bool {
	s := strings.TrimPrefix(v, "-")
	digits := 0
	for len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
		s, digits = s[1:], digits+1
	}
	if strings.HasPrefix(s, ".") {
		s = s[1:]
		for len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
			s, digits = s[1:], digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if len(s) > 0 && (s[0] == 'e' || s[0] == 'E') {
		s = strings.TrimLeft(s[1:], "+-")
		n := len(s)
		s = strings.TrimLeft(s, "0123456789")
		if n == len(s) {
			return false
		}
	}
	return s == ""
}
