package sip

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/stacks-ils/stacks"
)

// Field is one variable-length field of a message: a two-character identifier and
// its value, which ends at the next "|".
type Field struct {
	ID    string
	Value string
}

// Message is one parsed request from a self-check machine or sorter.
type Message struct {
	// ID is the two-digit command identifier: "93" login, "09" checkin, ...
	ID string
	// Fixed holds the fixed-length fields that follow the identifier, as sent.
	Fixed string
	// Fields are the variable-length fields, in the order sent.
	Fields []Field
	// Seq is the sequence number of the AY field, or -1 when the message has none.
	// SIP2 2.00 has one digit, 0 to 9; a client that counts on past 9 (AY10) is
	// read and answered with its number as sent, up to three digits.
	Seq int
	// Checksum is the AZ field's value, "" when the client sent none; ChecksumOK
	// reports whether it matched the message.
	Checksum   string
	ChecksumOK bool
}

// Get returns the value of the first field with the identifier id, or "".
func (m *Message) Get(id string) string {
	v, _ := m.Lookup(id)
	return v
}

// Lookup returns the value of the first field with the identifier id, and whether
// the message has one (a field sent empty is there, with the value "").
func (m *Message) Lookup(id string) (string, bool) {
	for _, f := range m.Fields {
		if f.ID == id {
			return f.Value, true
		}
	}
	return "", false
}

// fixedAt returns n bytes of the fixed part from off.
func (m *Message) fixedAt(off, n int) string { return m.Fixed[off : off+n] }

// Parse errors. A message whose checksum does not match is answered with a request
// to resend it (96); so is one that cannot be read (ErrMalformed: cut short, or an
// identifier that is not two digits). A message that arrived whole but that this
// server does not support (ErrUnknown) is not: sent again it would be the same.
var (
	ErrChecksum  = errors.New("sip: the checksum (AZ) does not match the message")
	ErrUnknown   = errors.New("sip: unknown or unsupported message identifier")
	ErrMalformed = errors.New("sip: malformed message")
)

// ByteError says where a message could not be read: the byte at Offset (counted
// from 0, the first byte of the identifier), and why. It wraps ErrMalformed.
type ByteError struct {
	Offset int
	// Byte is the byte at Offset; End is true when the message ended there
	// instead (it was cut short), and Byte is then 0.
	Byte byte
	End  bool
	Why  string
}

func (e *ByteError) Error() string {
	if e.End {
		return fmt.Sprintf("sip: malformed message: it ends at byte %d: %s", e.Offset, e.Why)
	}
	return fmt.Sprintf("sip: malformed message: byte %d (%s): %s", e.Offset, quoteByte(e.Byte), e.Why)
}

func (e *ByteError) Unwrap() error { return ErrMalformed }

// quoteByte writes a byte for a log: 'A' when printable, else 0x1B.
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7F {
		return fmt.Sprintf("%q 0x%02X", rune(c), c)
	}
	return fmt.Sprintf("0x%02X", c)
}

// fixedLength returns the length of the fixed-length fields of a request with the
// identifier id, and false for a message this server does not accept.
func fixedLength(id string) (int, bool) {
	switch id {
	case "93": // UID algorithm, PWD algorithm
		return 2, true
	case "99": // status code, max print width, protocol version
		return 8, true
	case "23": // language, transaction date
		return 21, true
	case "63": // language, transaction date, summary
		return 31, true
	case "11", "29": // policy or third party allowed, no block, transaction date, nb due date
		return 38, true
	case "09": // no block, transaction date, return date
		return 37, true
	case "17", "65", "35", "19", "25": // transaction date
		return 18, true
	case "01": // card retained, transaction date
		return 19, true
	case "15": // hold mode, transaction date
		return 19, true
	case "37": // transaction date, fee type, payment type, currency type
		return 25, true
	case "97":
		return 0, true
	}
	return 0, false
}

// OtherMessage is MessageLabel's label for every request this server does not
// answer as itself: an unknown or unsupported identifier, or bytes that are not one.
const OtherMessage = "other"

// MessageLabel returns the label under which a request is counted (in metrics): its
// two-digit identifier when it is one this server answers (93, 99, 23, ...; see
// fixedLength), and OtherMessage for anything else. A terminal can send any bytes,
// invalid UTF-8 included; a label taken from them as sent would grow the metrics
// with every new pair and is not always text (Prometheus refuses it).
func MessageLabel(req []byte) string {
	if len(req) < 2 || !isDigit(req[0]) || !isDigit(req[1]) {
		return OtherMessage
	}
	id := string(req[:2])
	if _, known := fixedLength(id); !known {
		return OtherMessage
	}
	return id
}

// Parse parses one request, without its line terminator (a CR, LF or CR LF left
// on is ignored). It returns the message with an error wrapping ErrChecksum,
// ErrUnknown or ErrMalformed (a *ByteError naming the byte) when it cannot be
// used; the message then still has what could be read of it (at least its ID and
// error detection fields when there were any), so that the answer can echo them.
//
// It reads what the reference servers (Koha's and Evergreen's SIPServer) read,
// which is what real terminals send: fields in any order, a field sent empty
// ("AC|"), empty fields ("||", a "|" right after the fixed part or at the end),
// the error detection fields with or without a "|" before, between or after them
// ("|AY1AZ", "AY1|AZ", "AZ1A2B|"), and a checksum in either letter case. Unknown
// fields are kept (handlers ask for the ones they use); the same field sent twice
// is kept twice, and Get and Lookup give the first, as Koha does. What cannot be
// read: an identifier that is not two digits, a message shorter than its
// fixed-length part or with a "|" inside it, and a field of one character (a
// message cut short).
func Parse(b []byte) (Message, error) {
	m := Message{Seq: -1}
	for len(b) > 0 && (b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	if len(b) < 2 {
		return m, &ByteError{Offset: len(b), End: true, Why: "a message starts with a two-digit identifier"}
	}
	m.ID = string(b[:2])
	fixed, known := fixedLength(m.ID)

	// Error detection: "AY" and one digit, then "AZ" and four hex digits, at the
	// end, each starting a field (after the fixed part, a "|", or the sequence
	// number): "...|ABXAZ1234" is an item barcode ending in AZ1234, not a
	// checksum. The checksum covers every byte before its four digits, a "|"
	// between AY and AZ included; a "|" after it is not covered.
	body := trimBars(b, 2+fixed)
	if n := len(body); n >= 8 && body[n-6] == 'A' && body[n-5] == 'Z' && startsField(body, n-6, fixed) {
		m.Checksum = string(body[n-4:])
		m.ChecksumOK = checksumMatches(body[:n-4], body[n-4:])
		body = trimBars(body[:n-6], 2+fixed)
	}
	if start, seq := sequenceAt(body, len(body), fixed); start >= 0 {
		m.Seq = seq
		body = body[:start]
	}
	if m.Checksum != "" && !m.ChecksumOK {
		return m, ErrChecksum
	}
	if !known {
		if !isDigit(b[0]) {
			return m, &ByteError{Offset: 0, Byte: b[0], Why: "a message starts with a two-digit identifier"}
		}
		if !isDigit(b[1]) {
			return m, &ByteError{Offset: 1, Byte: b[1], Why: "a message starts with a two-digit identifier"}
		}
		return m, ErrUnknown
	}
	if i := bytes.IndexByte(b[2:min(len(b), 2+fixed)], '|'); i >= 0 {
		return m, &ByteError{Offset: 2 + i, Byte: '|', Why: fmt.Sprintf("message %s has %d characters of fixed-length fields, without a \"|\"", m.ID, fixed)}
	}
	if len(body) < 2+fixed {
		return m, &ByteError{Offset: len(body), End: true, Why: fmt.Sprintf("message %s has %d characters of fixed-length fields", m.ID, fixed)}
	}
	m.Fixed = string(body[2 : 2+fixed])
	for off := 2 + fixed; off < len(body); {
		end := off + bytes.IndexByte(body[off:], '|')
		if end < off {
			end = len(body)
		}
		switch n := end - off; {
		case n == 0: // an empty field: "||", or a "|" after the fixed part
		case n == 1:
			return m, &ByteError{Offset: off, Byte: body[off], Why: "a field has a two-character identifier"}
		default:
			m.Fields = append(m.Fields, Field{ID: string(body[off : off+2]), Value: string(body[off+2 : end])})
		}
		off = end + 1
	}
	return m, nil
}

// trimBars returns b without the "|" at its end, but not into its first min
// bytes (the identifier and fixed part, which are data).
func trimBars(b []byte, min int) []byte {
	for len(b) > min && b[len(b)-1] == '|' {
		b = b[:len(b)-1]
	}
	return b
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// startsField reports whether a field can begin at b[i]: right after the message's
// fixed part, after a "|", or (for the checksum) right after an "AY" sequence
// number that itself begins a field.
func startsField(b []byte, i, fixed int) bool {
	switch {
	case i == 2+fixed:
		return true
	case i >= 1 && b[i-1] == '|':
		return true
	}
	start, _ := sequenceAt(b, i, fixed)
	return start >= 0
}

// sequenceAt finds a sequence number field ("AY" and one to three digits) that
// ends at b[end] and begins a field (right after the fixed part or a "|"). It
// returns where it begins and its number, or -1.
func sequenceAt(b []byte, end, fixed int) (start, seq int) {
	i := end
	for i > 0 && end-i < 3 && isDigit(b[i-1]) {
		i--
	}
	if i == end || i < 2+fixed+2 || b[i-2] != 'A' || b[i-1] != 'Y' {
		return -1, 0
	}
	start = i - 2
	if start != 2+fixed && b[start-1] != '|' {
		return -1, 0
	}
	for _, c := range b[i:end] {
		seq = seq*10 + int(c-'0')
	}
	return start, seq
}

// checksumOf is the SIP2 checksum of b: the two's complement of the 16-bit sum
// of its bytes. b runs from the message's first byte through the "AZ" of the
// checksum field.
func checksumOf(b []byte) uint16 {
	var sum uint16
	for _, c := range b {
		sum += uint16(c)
	}
	return -sum
}

// appendChecksum appends b's checksum to dst as four upper-case hex digits.
func appendChecksum(dst, b []byte) []byte {
	const hex = "0123456789ABCDEF"
	v := checksumOf(b)
	return append(dst, hex[v>>12], hex[v>>8&0xF], hex[v>>4&0xF], hex[v&0xF])
}

// checksumMatches compares a sent checksum, in either letter case, with b's.
func checksumMatches(b, sent []byte) bool {
	if len(sent) != 4 {
		return false
	}
	v, err := strconv.ParseUint(string(sent), 16, 16)
	return err == nil && uint16(v) == checksumOf(b)
}

// AddErrorDetection appends the sequence number (0 to 9) and the checksum to msg, as
// a client with error detection does; resend requests (96, 97) carry no sequence
// number.
func AddErrorDetection(msg string, seq int) string {
	b := []byte(msg)
	if len(msg) >= 2 && msg[:2] != "96" && msg[:2] != "97" {
		b = append(b, 'A', 'Y', byte('0'+seq%10))
	}
	b = append(b, 'A', 'Z')
	return string(appendChecksum(b, b))
}

// dateLayout is SIP2's 18-character date: YYYYMMDD, four characters of time zone
// (blanks for the library's local time), HHMMSS.
const dateLayout = "20060102    150405"

// response builds one response message into a buffer that the connection reuses.
type response struct {
	b []byte
	// body is the length of the response without its error detection fields,
	// set by finish.
	body int
}

func (r *response) start(id string) {
	r.b = append(r.b[:0], id...)
	r.body = 0
}

// fixed appends fixed-length text as is.
func (r *response) fixed(s string) { r.b = append(r.b, s...) }

// flag appends "Y" or "N".
func (r *response) flag(v bool) {
	if v {
		r.b = append(r.b, 'Y')
	} else {
		r.b = append(r.b, 'N')
	}
}

// ok appends "1" or "0".
func (r *response) ok(v bool) {
	if v {
		r.b = append(r.b, '1')
	} else {
		r.b = append(r.b, '0')
	}
}

// date appends t as an 18-character SIP date in loc.
func (r *response) date(t time.Time, loc *time.Location) {
	r.b = t.In(loc).AppendFormat(r.b, dateLayout)
}

// count appends n as a fixed-length number of width digits, or blanks when n is
// negative (unknown).
func (r *response) count(n, width int) {
	if n < 0 {
		for range width {
			r.b = append(r.b, ' ')
		}
		return
	}
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		r.b = append(r.b, '0')
	}
	if len(s) > width { // too large to show: the largest that fits
		for range width {
			r.b = append(r.b, '9')
		}
		return
	}
	r.b = append(r.b, s...)
}

// field appends a variable-length field, even when value is empty (a field the
// specification requires). Characters that would break the framing ("|", CR, LF)
// become spaces.
func (r *response) field(id, value string) {
	r.b = append(r.b, id...)
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c == '|' || c == '\r' || c == '\n' {
			c = ' '
		}
		r.b = append(r.b, c)
	}
	r.b = append(r.b, '|')
}

// optional appends a field only when value is not empty.
func (r *response) optional(id, value string) {
	if value != "" {
		r.field(id, value)
	}
}

// money appends an amount field ("12.50") for cents.
func (r *response) money(id string, cents int64) {
	r.b = append(r.b, id...)
	r.b = appendMoney(r.b, cents)
	r.b = append(r.b, '|')
}

func appendMoney(b []byte, cents int64) []byte { return stacks.AppendMoney(b, cents) }

func formatMoney(cents int64) string { return stacks.FormatMoney(cents) }

// finish appends the error detection fields when the request had them: the
// request's sequence number, and the checksum.
func (r *response) finish(req *Message) []byte {
	r.body = len(r.b)
	if req != nil && req.Seq >= 0 {
		r.b = append(r.b, 'A', 'Y')
		r.b = strconv.AppendInt(r.b, int64(req.Seq), 10)
	}
	if req != nil && (req.Checksum != "" || req.Seq >= 0) {
		r.b = append(r.b, 'A', 'Z')
		r.b = appendChecksum(r.b, r.b)
	}
	return r.b
}

// parseMoney reads an amount as SIP sends it ("12.50", "3", "0.5", or with a
// decimal comma, "3,50", as terminals configured for much of Europe send it)
// into cents.
func parseMoney(s string) (int64, bool) {
	whole, frac := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == '.' || s[i] == ',' {
			whole, frac = s[:i], s[i+1:]
			break
		}
	}
	if (whole == "" && frac == "") || len(whole) > 9 || len(frac) > 2 {
		return 0, false
	}
	var cents int64
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if !isDigit(part[i]) {
				return 0, false
			}
		}
	}
	for i := 0; i < len(whole); i++ {
		cents = cents*10 + int64(whole[i]-'0')
	}
	cents *= 100
	if len(frac) >= 1 {
		cents += int64(frac[0]-'0') * 10
	}
	if len(frac) == 2 {
		cents += int64(frac[1] - '0')
	}
	return cents, true
}
