package marc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// ISO 2709 structure characters.
const (
	recordTerminator = 0x1d
	fieldTerminator  = 0x1e
	subfieldDelim    = 0x1f
)

// MaxRecordLen is the largest ISO 2709 record: the leader holds the length in five
// digits. Longer input is refused, which also bounds the reader's memory.
const MaxRecordLen = 99999

const (
	leaderLen    = 24
	dirEntryLen  = 12
	minRecordLen = leaderLen + 2 // leader, directory terminator, record terminator
)

// Reader reads ISO 2709 records. It trusts the record length in the leader when
// the byte it points at is a record terminator, and otherwise falls back to
// scanning for the terminator, so a wrong or missing length costs nothing.
//
// Between records it silently skips white space, NUL and Ctrl-Z (0x1A) padding,
// which DOS-era files and tape dumps often end with. A record terminator with
// nothing before it is reported as a *RecordError "empty record". When bytes that
// are not a record come before a good one, or a record lost its terminator, the
// reader finds the next leader whose length ends at the next terminator, reports
// the bytes before it, and reads that record next.
//
// The directory is trusted for tags, lengths and offsets; the base address is
// taken from where the directory ends. Leader/09 'a' means UTF-8 (invalid bytes
// become U+FFFD). Anything else means MARC-8, except that a record whose bytes are
// valid UTF-8 with some non-ASCII and no escape sequences is taken as UTF-8
// mislabelled, which is common and which MARC-8 text practically never is.
type Reader struct {
	br    *peeker
	off   int64 // bytes consumed so far
	index int   // index of the next record
	err   error // sticky: io.EOF or an I/O error
}

// NewReader returns a Reader for ISO 2709 records in r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: &peeker{r: r}}
}

// Next returns the next record. See RecordReader for the errors.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.skipPadding(); err != nil {
		r.err = err
		return nil, err
	}
	start, index := r.off, r.index
	r.index++
	raw, n, reason, err := r.readRaw()
	if err != nil {
		r.err = err
		return nil, err
	}
	var rec *Record
	if reason == "" {
		rec, reason = parseISO(raw)
	}
	r.br.Discard(n)
	r.off += int64(n)
	if reason != "" {
		return nil, &RecordError{Index: index, Offset: start, Reason: reason}
	}
	return rec, nil
}

func isPadding(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', 0x00, 0x1a:
		return true
	}
	return false
}

func (r *Reader) skipPadding() error {
	for {
		c, err := r.br.Peek(1)
		if len(c) == 0 {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return fmt.Errorf("marc: reading input: %w", err)
		}
		if !isPadding(c[0]) {
			return nil
		}
		r.br.Discard(1)
		r.off++
	}
}

// readRaw finds the extent of the next record without consuming it. It returns
// the record bytes (valid until the next read), how many bytes to consume, and a
// reason if those bytes are known to be bad already.
func (r *Reader) readRaw() (raw []byte, n int, reason string, err error) {
	head, err := r.br.Peek(5)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, "", fmt.Errorf("marc: reading input: %w", err)
	}
	if len(head) == 5 && allDigits(head) {
		if l, _ := strconv.Atoi(string(head)); l >= minRecordLen {
			buf, err := r.br.Peek(l)
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, 0, "", fmt.Errorf("marc: reading input: %w", err)
			}
			// A terminator inside would mean the length spans two records.
			if len(buf) == l && buf[l-1] == recordTerminator && bytes.IndexByte(buf[:l-1], recordTerminator) < 0 {
				return buf, l, "", nil
			}
		}
	}

	// The length is missing or wrong: scan for the record terminator.
	for size := 4096; ; size *= 2 {
		if size > MaxRecordLen {
			size = MaxRecordLen
		}
		buf, err := r.br.Peek(size)
		if i := bytes.IndexByte(buf, recordTerminator); i >= 0 {
			raw = buf[:i+1]
			if len(raw) == 1 {
				return raw, 1, "empty record", nil
			}
			if p := embeddedLeader(raw); p > 0 {
				if looksLikeLeader(raw) {
					return raw, p, fmt.Sprintf("record terminator missing: %d bytes in, another record starts", p), nil
				}
				return raw, p, fmt.Sprintf("%d bytes that are not a record before the next record", p), nil
			}
			return raw, len(raw), "", nil
		}
		if errors.Is(err, io.EOF) {
			return buf, len(buf), fmt.Sprintf("truncated record: input ends after %d bytes without a record terminator", len(buf)), nil
		}
		if err != nil {
			return nil, 0, "", fmt.Errorf("marc: reading input: %w", err)
		}
		if size == MaxRecordLen {
			// Skip up to a leader whose record ends beyond this window, or else
			// all but the tail, where the next leader may begin.
			n := leaderBeyond(buf)
			if n == 0 {
				n = MaxRecordLen - leaderLen
			}
			return buf, n, fmt.Sprintf("no record terminator within %d bytes (the ISO 2709 maximum); skipped %d bytes", MaxRecordLen, n), nil
		}
	}
}

// looksLikeLeader reports whether b starts with a plausible MARC 21 leader: a
// numeric record length and base address, "22" at 10-11 and "45" at 20-21.
func looksLikeLeader(b []byte) bool {
	return len(b) >= leaderLen && allDigits(b[0:5]) && b[10] == '2' && b[11] == '2' &&
		allDigits(b[12:17]) && b[20] == '4' && b[21] == '5'
}

// leaderBeyond returns the position of the first plausible leader in buf, past
// its start, whose record would end beyond buf, or 0.
func leaderBeyond(buf []byte) int {
	for p := 1; p+leaderLen <= len(buf); p++ {
		if buf[p] < '0' || buf[p] > '9' || !looksLikeLeader(buf[p:]) {
			continue
		}
		if l, _ := strconv.Atoi(string(buf[p : p+5])); p+l > len(buf) {
			return p
		}
	}
	return 0
}

// embeddedLeader looks inside raw, a run of bytes ending at a record terminator,
// for a plausible leader whose length ends exactly at that terminator: that is a
// good record preceded by garbage or by a record that lost its terminator. It
// returns the leader's position, or 0.
func embeddedLeader(raw []byte) int {
	for p := 1; p+leaderLen <= len(raw); p++ {
		if raw[p] < '0' || raw[p] > '9' || !looksLikeLeader(raw[p:]) {
			continue
		}
		if l, _ := strconv.Atoi(string(raw[p : p+5])); l == len(raw)-p {
			return p
		}
	}
	return 0
}

// parseISO decodes one record, raw ending with its record terminator. It returns
// the record or why it cannot.
func parseISO(raw []byte) (*Record, string) {
	if len(raw) < minRecordLen {
		return nil, fmt.Sprintf("record is only %d bytes; even an empty record needs %d", len(raw), minRecordLen)
	}
	leader := raw[:leaderLen]
	for i, c := range leader {
		if !printable(c) {
			return nil, fmt.Sprintf("leader byte %d is %#x, not printable ASCII", i, c)
		}
	}
	// The directory ends at the first field terminator; its position is the base
	// address, whatever leader/12-16 says.
	d := bytes.IndexByte(raw[leaderLen:], fieldTerminator)
	if d < 0 {
		return nil, "no field terminator after the directory"
	}
	dir := raw[leaderLen : leaderLen+d]
	if len(dir)%dirEntryLen != 0 {
		return nil, fmt.Sprintf("directory is %d bytes, not a multiple of %d", len(dir), dirEntryLen)
	}
	data := raw[leaderLen+d+1 : len(raw)-1]

	utf := leader[9] == 'a' || (utf8.Valid(data) && !isASCII(data) && bytes.IndexByte(data, 0x1b) < 0)
	rec := &Record{}
	if n := len(dir) / dirEntryLen; n > 0 {
		rec.Fields = make([]Field, 0, n)
	}
	for i := 0; i < len(dir); i += dirEntryLen {
		e := dir[i : i+dirEntryLen]
		n := i / dirEntryLen
		tag := string(e[0:3])
		if !validTag(tag) {
			return nil, fmt.Sprintf("directory entry %d: tag %q is not three letters or digits", n, e[0:3])
		}
		if !allDigits(e[3:12]) {
			return nil, fmt.Sprintf("directory entry %d (%s): length and start %q are not numeric", n, tag, e[3:12])
		}
		length, _ := strconv.Atoi(string(e[3:7]))
		start, _ := strconv.Atoi(string(e[7:12]))
		if length == 0 || start+length > len(data) {
			return nil, fmt.Sprintf("directory entry %d (%s): field at %d, length %d, lies outside the %d-byte data area", n, tag, start, length, len(data))
		}
		body := data[start : start+length]
		if body[length-1] != fieldTerminator {
			return nil, fmt.Sprintf("field %s (directory entry %d) does not end with a field terminator", tag, n)
		}
		body = body[:length-1]
		f, reason := parseField(tag, body, utf)
		if reason != "" {
			return nil, fmt.Sprintf("field %s (directory entry %d): %s", tag, n, reason)
		}
		rec.Fields = append(rec.Fields, f)
	}
	rec.Leader = string(leader)
	if err := normalizeLeader(rec); err != nil {
		return nil, err.Error()
	}
	return rec, ""
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func parseField(tag string, body []byte, utf bool) (Field, string) {
	var dec marc8Decoder
	decode := func(b []byte) string {
		if utf {
			return clean(string(b))
		}
		return clean(dec.decode(b))
	}
	if IsControlTag(tag) {
		return Field{Tag: tag, Value: decode(body)}, ""
	}
	if len(body) < 2 {
		return Field{}, "data field is shorter than its two indicators"
	}
	f := Field{Tag: tag, Ind1: body[0], Ind2: body[1]}
	if !printable(f.Ind1) || !printable(f.Ind2) {
		return Field{}, fmt.Sprintf("indicators %q are not printable ASCII", body[:2])
	}
	rest := body[2:]
	if len(rest) == 0 {
		return f, ""
	}
	if rest[0] != subfieldDelim {
		return Field{}, "data before the first subfield delimiter"
	}
	for _, sf := range bytes.Split(rest[1:], []byte{subfieldDelim}) {
		if len(sf) == 0 {
			continue // a delimiter with no code: nothing to keep
		}
		if !printable(sf[0]) {
			return Field{}, fmt.Sprintf("subfield code %#x is not printable ASCII", sf[0])
		}
		f.Subfields = append(f.Subfields, Subfield{Code: sf[0], Value: decode(sf[1:])})
	}
	return f, ""
}

// encodedSize returns the length of r in ISO 2709 and its base address.
func encodedSize(r *Record) (total, base int) {
	base = leaderLen + dirEntryLen*len(r.Fields) + 1
	total = base + 1
	for _, f := range r.Fields {
		total += fieldSize(f)
	}
	return total, base
}

func fieldSize(f Field) int {
	if f.IsControl() {
		return len(f.Value) + 1
	}
	n := 2 + 1
	for _, s := range f.Subfields {
		n += 2 + len(s.Value)
	}
	return n
}

// normalizeLeader makes r.Leader describe r as WriteISO2709 encodes it, and fails
// if r is too big for ISO 2709.
func normalizeLeader(r *Record) error {
	total, base := encodedSize(r)
	if total > MaxRecordLen {
		return fmt.Errorf("record would be %d bytes in UTF-8, over the ISO 2709 limit of %d", total, MaxRecordLen)
	}
	for _, f := range r.Fields {
		if n := fieldSize(f); n > 9999 {
			return fmt.Errorf("field %s would be %d bytes, over the ISO 2709 limit of 9999", f.Tag, n)
		}
	}
	l := []byte(r.Leader)
	copy(l[0:5], fmt.Sprintf("%05d", total))
	l[9] = 'a'
	copy(l[10:12], "22")
	copy(l[12:17], fmt.Sprintf("%05d", base))
	copy(l[20:24], "4500")
	r.Leader = string(l)
	return nil
}

// WriteISO2709 writes r as one ISO 2709 record in UTF-8. It computes the record
// length, directory and base address itself and sets leader/09 to 'a', so only
// the other leader positions are taken from r.Leader. It fails, writing nothing,
// if r does not pass Validate or is over MaxRecordLen bytes.
func WriteISO2709(w io.Writer, r *Record) error {
	b, err := encodeISO(r)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func encodeISO(r *Record) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	cp := *r
	if err := normalizeLeader(&cp); err != nil {
		return nil, fmt.Errorf("marc: %w", err)
	}
	total, base := encodedSize(&cp)
	out := make([]byte, 0, total)
	out = append(out, cp.Leader...)
	start := 0
	for _, f := range cp.Fields {
		n := fieldSize(f)
		out = append(out, f.Tag...)
		out = append(out, fmt.Sprintf("%04d%05d", n, start)...)
		start += n
	}
	out = append(out, fieldTerminator)
	for _, f := range cp.Fields {
		if f.IsControl() {
			out = append(out, f.Value...)
		} else {
			out = append(out, f.Ind1, f.Ind2)
			for _, s := range f.Subfields {
				out = append(out, subfieldDelim, s.Code)
				out = append(out, s.Value...)
			}
		}
		out = append(out, fieldTerminator)
	}
	out = append(out, recordTerminator)
	if len(out) != total || base != leaderLen+dirEntryLen*len(cp.Fields)+1 {
		return nil, fmt.Errorf("marc: internal error: encoded %d bytes, expected %d", len(out), total)
	}
	return out, nil
}
