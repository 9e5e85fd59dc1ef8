package marc

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Namespace is the MARCXML namespace, MARC21 slim.
const Namespace = "http://www.loc.gov/MARC21/slim"

// XMLReader reads MARCXML. It streams: every <record> element anywhere in the
// document is a record, so a <collection>, a lone <record>, or records wrapped in
// something else (an OAI-PMH response, say) all work. The elements may be in the
// MARCXML namespace under any prefix or in no namespace.
//
// A record that breaks MARC rules is a *RecordError and reading goes on; XML that
// is not well formed ends the stream, because the parser cannot resynchronize.
type XMLReader struct {
	d     *xml.Decoder
	in    *boundedReader
	index int
	err   error // sticky: io.EOF or broken XML
}

// MaxXMLRecordLen bounds the memory one MARCXML record (or any other element's
// text) may take. It is far above what an ISO 2709-sized record needs even with
// heavy markup and escaping; input that runs past it ends the stream.
const MaxXMLRecordLen = 8 << 20

var errXMLTooLarge = errors.New("marc: MARCXML record or text longer than 8 MB")

// unsupportedCharset is a charset the XML declaration names that NewXMLReader
// does not read.
type unsupportedCharset string

func (c unsupportedCharset) Error() string {
	return fmt.Sprintf("marc: MARCXML in charset %q is not supported; convert it to UTF-8", string(c))
}

// boundedReader stops delivering input beyond limit, so the XML decoder cannot
// be made to buffer an unbounded token.
type boundedReader struct {
	r     io.Reader
	n     int64 // bytes delivered
	limit int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n >= b.limit {
		return 0, errXMLTooLarge
	}
	if rest := b.limit - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

// NewXMLReader returns an XMLReader for the MARCXML document in r. Besides UTF-8
// it accepts documents declared as ISO-8859-1 or US-ASCII.
func NewXMLReader(r io.Reader) *XMLReader {
	in := &boundedReader{r: r, limit: MaxXMLRecordLen}
	d := xml.NewDecoder(in)
	d.CharsetReader = charsetReader
	return &XMLReader{d: d, in: in}
}

// Next returns the next record. See RecordReader for the errors.
func (x *XMLReader) Next() (*Record, error) {
	if x.err != nil {
		return nil, x.err
	}
	for {
		off := x.d.InputOffset()
		// The decoder reads ahead at most a buffer's worth past off.
		x.in.limit = off + MaxXMLRecordLen
		tok, err := x.d.Token()
		if err != nil {
			return nil, x.fail(err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "record" || !marcSpace(se.Name.Space) {
			continue
		}
		index := x.index
		x.index++
		rec, reason, err := x.record()
		if err != nil {
			return nil, x.fail(err)
		}
		if reason != "" {
			return nil, &RecordError{Index: index, Offset: off, Reason: reason}
		}
		return rec, nil
	}
}

func (x *XMLReader) fail(err error) error {
	if errors.Is(err, io.EOF) {
		x.err = io.EOF
		return x.err
	}
	line, _ := x.d.InputPos()
	se := &SyntaxError{Line: line, Offset: x.d.InputOffset(), Err: err}
	var xe *xml.SyntaxError
	var uc unsupportedCharset
	if errors.As(err, &xe) {
		se.Line = xe.Line
	}
	switch {
	case xe != nil && xe.Msg == "unexpected EOF", errors.Is(err, io.ErrUnexpectedEOF):
		se.Reason = "the file ends in the middle of the XML: it is cut short"
	case xe != nil:
		se.Reason = xe.Msg
		if strings.HasPrefix(xe.Msg, "invalid character entity &") && !strings.Contains(xe.Msg, "no semicolon") {
			se.Reason += " (only &amp; &lt; &gt; &quot; &apos; and numeric character references are read; entities a DTD declares are not)"
		} else if strings.HasPrefix(xe.Msg, "invalid character entity &") {
			se.Reason += ` (a "&" in text must be written "&amp;")`
		}
	case errors.Is(err, errXMLTooLarge):
		se.Reason = "a record, or a text in it, is longer than 8 MB"
	case errors.As(err, &uc):
		se.Reason = fmt.Sprintf("the document declares the charset %q, which is not read; convert it to UTF-8", string(uc))
	default:
		// Not the document's fault (the input could not be read): not a
		// SyntaxError.
		x.err = fmt.Errorf("marc: reading MARCXML near byte %d: %w", se.Offset, err)
		return x.err
	}
	x.err = se
	return x.err
}

// SyntaxError is MARCXML that is not well formed, or too large to read: the
// document cannot be read past it, so reading stops. It says where, as a line
// (1-based) and a byte offset, and what is wrong, for a person to read.
type SyntaxError struct {
	Line   int
	Offset int64
	Reason string
	Err    error // the parser's own error
}

// Error says where and what.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("marc: MARCXML is not well formed at line %d (near byte %d): %s", e.Line, e.Offset, e.Reason)
}

// Unwrap returns the parser's error.
func (e *SyntaxError) Unwrap() error { return e.Err }

func marcSpace(s string) bool { return s == Namespace || s == "" || s == "marc" }

// token is Decoder.Token for use inside an element, where the end of input is
// an error.
func (x *XMLReader) token() (xml.Token, error) {
	tok, err := x.d.Token()
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return tok, err
}

// record reads the rest of a <record> element. It returns the record or the
// first reason it is bad; err is for broken XML.
func (x *XMLReader) record() (rec *Record, reason string, err error) {
	rec = &Record{}
	bad := func(format string, a ...any) {
		if reason == "" {
			reason = fmt.Sprintf(format, a...)
		}
	}
	haveLeader := false
	for {
		tok, err := x.token()
		if err != nil {
			return nil, "", err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if !haveLeader {
				bad("record has no leader")
			} else if len(rec.Leader) != leaderLen {
				bad("leader %q is %d bytes, want %d", rec.Leader, len(rec.Leader), leaderLen)
			} else {
				for i := 0; i < len(rec.Leader); i++ {
					if !printable(rec.Leader[i]) {
						bad("leader byte %d is %#x, not printable ASCII", i, rec.Leader[i])
						break
					}
				}
			}
			if reason == "" {
				if err := normalizeLeader(rec); err != nil {
					bad("%s", err)
				}
			}
			if reason != "" {
				return nil, reason, nil
			}
			return rec, "", nil
		case xml.StartElement:
			if !marcSpace(t.Name.Space) {
				if err := x.d.Skip(); err != nil {
					return nil, "", err
				}
				continue
			}
			switch t.Name.Local {
			case "leader":
				s, err := x.text()
				if err != nil {
					return nil, "", err
				}
				if haveLeader {
					bad("record has two leaders")
				}
				haveLeader = true
				rec.Leader = strings.Trim(s, "\r\n\t")
			case "controlfield":
				tag := attr(t, "tag")
				s, err := x.text()
				if err != nil {
					return nil, "", err
				}
				if !validTag(tag) {
					bad("controlfield tag %q is not three letters or digits", tag)
				} else if !IsControlTag(tag) {
					bad("controlfield has the data field tag %s", tag)
				}
				rec.Fields = append(rec.Fields, Field{Tag: tag, Value: clean(s)})
			case "datafield":
				f, why, err := x.datafield(t)
				if err != nil {
					return nil, "", err
				}
				if why != "" {
					bad("datafield %q: %s", f.Tag, why)
				}
				rec.Fields = append(rec.Fields, f)
			default:
				if err := x.d.Skip(); err != nil {
					return nil, "", err
				}
			}
		}
	}
}

func (x *XMLReader) datafield(se xml.StartElement) (f Field, reason string, err error) {
	bad := func(format string, a ...any) {
		if reason == "" {
			reason = fmt.Sprintf(format, a...)
		}
	}
	f.Tag = attr(se, "tag")
	if !validTag(f.Tag) {
		bad("tag is not three letters or digits")
	} else if IsControlTag(f.Tag) {
		bad("datafield has a control field tag")
	}
	ind := func(name string) byte {
		v := attr(se, name)
		switch {
		case v == "":
			return ' '
		case len(v) == 1 && printable(v[0]):
			return v[0]
		}
		bad("%s %q is not one printable ASCII character", name, v)
		return ' '
	}
	f.Ind1, f.Ind2 = ind("ind1"), ind("ind2")
	for {
		tok, err := x.token()
		if err != nil {
			return f, "", err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return f, reason, nil
		case xml.StartElement:
			if t.Name.Local != "subfield" || !marcSpace(t.Name.Space) {
				if err := x.d.Skip(); err != nil {
					return f, "", err
				}
				continue
			}
			code := attr(t, "code")
			s, err := x.text()
			if err != nil {
				return f, "", err
			}
			if len(code) != 1 || !printable(code[0]) {
				bad("subfield code %q is not one printable ASCII character", code)
				continue
			}
			f.Subfields = append(f.Subfields, Subfield{Code: code[0], Value: clean(s)})
		}
	}
}

// text returns the character data of the element just opened, skipping any
// elements nested in it.
func (x *XMLReader) text() (string, error) {
	var b strings.Builder
	for {
		tok, err := x.token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.StartElement:
			if err := x.d.Skip(); err != nil {
				return "", err
			}
		case xml.EndElement:
			return b.String(), nil
		}
	}
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii":
		return input, nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1":
		return &latin1Reader{r: input}, nil
	}
	return nil, unsupportedCharset(label)
}

// latin1Reader converts ISO-8859-1 to UTF-8.
type latin1Reader struct {
	r   io.Reader
	buf []byte
	out []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	if len(l.out) == 0 {
		if l.buf == nil {
			l.buf = make([]byte, 4096)
		}
		n, err := l.r.Read(l.buf)
		if n == 0 {
			return 0, err
		}
		for _, c := range l.buf[:n] {
			l.out = utf8.AppendRune(l.out, rune(c))
		}
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	if len(l.out) == 0 {
		l.out = l.out[:0:0]
	}
	return n, nil
}

// XMLWriter writes records as one MARCXML <collection>. Close ends the
// collection; it does not close the underlying writer.
type XMLWriter struct {
	w       io.Writer
	started bool
	closed  bool
	err     error
}

// NewXMLWriter returns an XMLWriter that writes to w.
func NewXMLWriter(w io.Writer) *XMLWriter { return &XMLWriter{w: w} }

const collectionStart = xml.Header + `<collection xmlns="` + Namespace + `">` + "\n"

// Write adds r to the collection. A record that fails Validate is refused with
// nothing written, and the writer stays usable.
func (x *XMLWriter) Write(r *Record) error {
	if x.err != nil {
		return x.err
	}
	if x.closed {
		return errors.New("marc: write to a closed XMLWriter")
	}
	var buf bytes.Buffer
	if !x.started {
		buf.WriteString(collectionStart)
	}
	if err := appendXML(&buf, r, "  ", false); err != nil {
		return err
	}
	x.started = true
	if _, err := x.w.Write(buf.Bytes()); err != nil {
		x.err = err
	}
	return x.err
}

// Close ends the collection (an empty one if nothing was written).
func (x *XMLWriter) Close() error {
	if x.err != nil || x.closed {
		return x.err
	}
	x.closed = true
	s := "</collection>\n"
	if !x.started {
		s = collectionStart + s
	}
	_, x.err = io.WriteString(x.w, s)
	return x.err
}

// ToXML returns r as one MARCXML <record> element carrying the MARCXML namespace,
// without an XML declaration: the form the catalog stores, and NewXMLReader reads
// back.
func ToXML(r *Record) (string, error) {
	var buf bytes.Buffer
	if err := appendXML(&buf, r, "", true); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// FromXML reads the one MARCXML record of source (ToXML's form, as the
// catalogue stores it).
func FromXML(source string) (*Record, error) {
	return NewXMLReader(strings.NewReader(source)).Next()
}

func appendXML(buf *bytes.Buffer, r *Record, indent string, ns bool) error {
	if err := r.Validate(); err != nil {
		return err
	}
	esc := func(s string) {
		// EscapeText only fails on a failing writer; bytes.Buffer does not fail.
		_ = xml.EscapeText(buf, []byte(s))
	}
	buf.WriteString(indent)
	if ns {
		buf.WriteString(`<record xmlns="` + Namespace + `">` + "\n")
	} else {
		buf.WriteString("<record>\n")
	}
	buf.WriteString(indent + "  <leader>")
	esc(r.Leader)
	buf.WriteString("</leader>\n")
	for _, f := range r.Fields {
		if f.IsControl() {
			buf.WriteString(indent + `  <controlfield tag="` + f.Tag + `">`)
			esc(f.Value)
			buf.WriteString("</controlfield>\n")
			continue
		}
		buf.WriteString(indent + `  <datafield tag="` + f.Tag + `" ind1="`)
		esc(string(f.Ind1))
		buf.WriteString(`" ind2="`)
		esc(string(f.Ind2))
		buf.WriteString("\">\n")
		for _, s := range f.Subfields {
			buf.WriteString(indent + `    <subfield code="`)
			esc(string(s.Code))
			buf.WriteString(`">`)
			esc(s.Value)
			buf.WriteString("</subfield>\n")
		}
		buf.WriteString(indent + "  </datafield>\n")
	}
	buf.WriteString(indent + "</record>\n")
	return nil
}
