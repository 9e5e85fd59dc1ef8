package copycat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/stacks-ils/stacks/catalog/marc"
)

// A Z39.50 client (ANSI/NISO Z39.50-2003, version 3): Init, one Search with a
// type-1 (RPN) query of Bib-1 use attributes, one Present in the target's record
// syntax. The APDUs are built and read with go-asn1-ber, the BER library the Go
// LDAP client uses; the Z39.50 tags are below, named as in the standard's
// ASN.1 module.

// APDU tags (context-specific, constructed).
const (
	tagInitRequest     ber.Tag = 20
	tagInitResponse    ber.Tag = 21
	tagSearchRequest   ber.Tag = 22
	tagSearchResponse  ber.Tag = 23
	tagPresentRequest  ber.Tag = 24
	tagPresentResponse ber.Tag = 25
	tagClose           ber.Tag = 48
)

// Fields of the APDUs (context-specific tags).
const (
	tagProtocolVersion        ber.Tag = 3
	tagOptions                ber.Tag = 4
	tagPreferredMessageSize   ber.Tag = 5
	tagExceptionalRecordSize  ber.Tag = 6
	tagResult                 ber.Tag = 12
	tagSmallSetUpperBound     ber.Tag = 13
	tagLargeSetLowerBound     ber.Tag = 14
	tagMediumSetPresentNumber ber.Tag = 15
	tagReplaceIndicator       ber.Tag = 16
	tagResultSetName          ber.Tag = 17
	tagDatabaseNames          ber.Tag = 18
	tagSimpleComposition      ber.Tag = 19
	tagQuery                  ber.Tag = 21
	tagSearchStatus           ber.Tag = 22
	tagResultCount            ber.Tag = 23
	tagRecordsReturned        ber.Tag = 24
	tagResponseRecords        ber.Tag = 28
	tagRecordsRequested       ber.Tag = 29
	tagStartPoint             ber.Tag = 30
	tagResultSetID            ber.Tag = 31
	tagUserInformation        ber.Tag = 11
	tagAttributeList          ber.Tag = 44
	tagGeneralTerm            ber.Tag = 45
	tagAttributesPlusTerm     ber.Tag = 102
	tagPreferredSyntax        ber.Tag = 104
	tagDatabaseName           ber.Tag = 105
	tagImplementationID       ber.Tag = 110
	tagImplementationName     ber.Tag = 111
	tagImplementationVersion  ber.Tag = 112
	tagAttributeType          ber.Tag = 120
	tagNumericValue           ber.Tag = 121
	tagNonSurrogateDiagnostic ber.Tag = 130
	tagMultipleDiagnostics    ber.Tag = 205
)

// Object identifiers.
const (
	oidBib1    = "1.2.840.10003.3.1"
	oidUSMARC  = "1.2.840.10003.5.10"
	oidMARCXML = "1.2.840.10003.5.109.10"
)

// Bib-1 use attributes (type 1) for each searchable field.
var bib1Use = map[Field]int{ISBN: 7, Title: 4, Author: 1003}

// maxZResponse bounds one APDU read from a target.
const maxZResponse = 32 << 20

// parseZAddress splits "host:port/database"; the port defaults to 210, the
// port IANA assigned to Z39.50.
func parseZAddress(addr string) (hostport, database string, err error) {
	addr = strings.TrimSpace(addr)
	addr = strings.TrimPrefix(addr, "tcp:")
	i := strings.IndexByte(addr, '/')
	if i < 0 || i == len(addr)-1 {
		return "", "", errors.New("write a Z39.50 target as host:port/database (for example z3950.example.org:210/Books)")
	}
	hostport, database = addr[:i], addr[i+1:]
	host, port, splitErr := net.SplitHostPort(hostport)
	if splitErr != nil {
		host, port = hostport, "210"
	}
	if host == "" {
		return "", "", errors.New("the Z39.50 address has no host name")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("the Z39.50 port %q is not a number from 1 to 65535", port)
	}
	return net.JoinHostPort(host, port), database, nil
}

func ctxInt(tag ber.Tag, v int) *ber.Packet {
	return ber.NewInteger(ber.ClassContext, ber.TypePrimitive, tag, v, "")
}

func ctxString(tag ber.Tag, s string) *ber.Packet {
	return ber.NewString(ber.ClassContext, ber.TypePrimitive, tag, s, "")
}

func ctxBool(tag ber.Tag, v bool) *ber.Packet {
	return ber.NewBoolean(ber.ClassContext, ber.TypePrimitive, tag, v, "")
}

func ctxBits(tag ber.Tag, content ...byte) *ber.Packet {
	p := ber.Encode(ber.ClassContext, ber.TypePrimitive, tag, nil, "")
	p.Data.Write(content)
	return p
}

func ctxSeq(tag ber.Tag, children ...*ber.Packet) *ber.Packet {
	p := ber.Encode(ber.ClassContext, ber.TypeConstructed, tag, nil, "")
	for _, c := range children {
		p.AppendChild(c)
	}
	return p
}

func seq(children ...*ber.Packet) *ber.Packet {
	p := ber.NewSequence("")
	for _, c := range children {
		p.AppendChild(c)
	}
	return p
}

// initRequest asks for version 3 and the search and present services.
func initRequest() *ber.Packet {
	return ctxSeq(tagInitRequest,
		// BIT STRING: unused-bits count, then version1..version3 set.
		ctxBits(tagProtocolVersion, 0x05, 0xe0),
		// search (bit 0) and present (bit 1).
		ctxBits(tagOptions, 0x06, 0xc0),
		ctxInt(tagPreferredMessageSize, maxZResponse),
		ctxInt(tagExceptionalRecordSize, maxZResponse),
		ctxString(tagImplementationID, "stacks"),
		ctxString(tagImplementationName, "Stacks ILS copy cataloguing"),
		ctxString(tagImplementationVersion, "1"),
	)
}

// searchRequest runs q in database as result set "default", returning no
// records with the search (they come with Present).
func searchRequest(database string, q Query) *ber.Packet {
	attr := seq(
		ctxInt(tagAttributeType, 1),
		ctxInt(tagNumericValue, bib1Use[q.Field]),
	)
	apt := ctxSeq(tagAttributesPlusTerm,
		ctxSeq(tagAttributeList, attr),
		ctxString(tagGeneralTerm, q.Term),
	)
	// Query type-1 [1] IMPLICIT RPNQuery: the attribute set, then the
	// RPNStructure op [0] holding one Operand.
	rpn := ctxSeq(1,
		ber.NewOID(ber.ClassUniversal, ber.TypePrimitive, ber.TagObjectIdentifier, oidBib1, ""),
		ctxSeq(0, apt),
	)
	return ctxSeq(tagSearchRequest,
		ctxInt(tagSmallSetUpperBound, 0),
		ctxInt(tagLargeSetLowerBound, 1),
		ctxInt(tagMediumSetPresentNumber, 0),
		ctxBool(tagReplaceIndicator, true),
		ctxString(tagResultSetName, "default"),
		ctxSeq(tagDatabaseNames, ctxString(tagDatabaseName, database)),
		ctxSeq(tagQuery, rpn),
	)
}

// presentRequest asks for records 1..n of result set "default", full records
// ("F") in syntax oid.
func presentRequest(n int, oid string) *ber.Packet {
	return ctxSeq(tagPresentRequest,
		ctxString(tagResultSetID, "default"),
		ctxInt(tagStartPoint, 1),
		ctxInt(tagRecordsRequested, n),
		ctxSeq(tagSimpleComposition, ctxString(0, "F")),
		ber.NewOID(ber.ClassContext, ber.TypePrimitive, tagPreferredSyntax, oid, ""),
	)
}

// zConn is one association with a target.
type zConn struct {
	conn net.Conn
	in   io.Reader
}

func (z *zConn) exchange(req *ber.Packet, want ber.Tag) (*ber.Packet, error) {
	if _, err := z.conn.Write(req.Bytes()); err != nil {
		return nil, err
	}
	lr := &io.LimitedReader{R: z.in, N: maxZResponse}
	p, err := ber.ReadPacket(lr)
	if err != nil {
		if lr.N <= 0 {
			return nil, notProtocol("answered more than %d MB at once", maxZResponse>>20)
		}
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return nil, err
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, notProtocol("closed the connection without answering")
		}
		return nil, notProtocol("answered something that is not Z39.50 (%v)", err)
	}
	if p.ClassType != ber.ClassContext || p.TagType != ber.TypeConstructed {
		return nil, notProtocol("answered something that is not Z39.50")
	}
	if p.Tag == tagClose {
		return nil, &diagnosticError{reason: "closed the association" + closeReason(p)}
	}
	if p.Tag != want {
		return nil, notProtocol("answered something that is not Z39.50 (APDU [%d] where [%d] was expected)", p.Tag, want)
	}
	return p, nil
}

func closeReason(p *ber.Packet) string {
	if c := child(p, ber.ClassContext, 211); c != nil {
		return " (reason " + strconv.FormatInt(intOf(c), 10) + ")"
	}
	return ""
}

// child is p's first child with class and tag, or nil.
func child(p *ber.Packet, class ber.Class, tag ber.Tag) *ber.Packet {
	for _, c := range p.Children {
		if c.ClassType == class && c.Tag == tag {
			return c
		}
	}
	return nil
}

func intOf(p *ber.Packet) int64 {
	if p == nil {
		return 0
	}
	n, _ := ber.ParseInt64(p.Data.Bytes())
	return n
}

// searchZ3950 runs q at the Z39.50 target t. ctx bounds the whole exchange.
func searchZ3950(ctx context.Context, t Target, q Query, max int) (Result, error) {
	res := Result{Target: t}
	hostport, database, err := parseZAddress(t.Address)
	if err != nil {
		return res, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	return searchZConn(ctx, conn, t, database, q, max)
}

// searchZConn runs q in database over conn, an open connection to the target.
func searchZConn(ctx context.Context, conn net.Conn, t Target, database string, q Query, max int) (Result, error) {
	res := Result{Target: t}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	// A cancelled search (the cataloguer left) ends the exchange at once.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	z := &zConn{conn: conn, in: conn}
	resp, err := z.exchange(initRequest(), tagInitResponse)
	if err != nil {
		return res, ctxErr(ctx, err)
	}
	if r := child(resp, ber.ClassContext, tagResult); r == nil || intOf(r) == 0 {
		reason := "refused the connection (Init rejected)"
		if info := child(resp, ber.ClassContext, tagUserInformation); info != nil {
			if s := diagText(info); s != "" {
				reason += ": " + s
			}
		}
		return res, &diagnosticError{reason: reason}
	}

	resp, err = z.exchange(searchRequest(database, q), tagSearchResponse)
	if err != nil {
		return res, ctxErr(ctx, err)
	}
	if diag := recordsDiagnostic(resp); diag != "" {
		return res, &diagnosticError{reason: "reported " + diag}
	}
	if st := child(resp, ber.ClassContext, tagSearchStatus); st == nil || intOf(st) == 0 {
		return res, &diagnosticError{reason: "reported that the search failed"}
	}
	total := intOf(child(resp, ber.ClassContext, tagResultCount))
	if total < 0 {
		return res, &diagnosticError{reason: fmt.Sprintf("reported %d records found", total)}
	}
	res.Total = int(min(total, int64(1<<31-1)))
	n := min(res.Total, max)
	if n == 0 {
		return res, nil
	}

	oid := oidUSMARC
	if t.Syntax == MARCXML {
		oid = oidMARCXML
	}
	resp, err = z.exchange(presentRequest(n, oid), tagPresentResponse)
	if err != nil {
		return res, ctxErr(ctx, err)
	}
	if diag := recordsDiagnostic(resp); diag != "" {
		return res, &diagnosticError{reason: "reported " + diag}
	}
	recs := child(resp, ber.ClassContext, tagResponseRecords)
	if recs == nil {
		return res, nil
	}
	// A target may return more records than asked: the first n are kept.
	for _, npr := range recs.Children[:min(len(recs.Children), n)] {
		data, ok := retrievalRecord(npr)
		if !ok {
			res.Skipped++
			continue
		}
		rec, err := readZRecord(data, t)
		if err != nil {
			res.Skipped++
			continue
		}
		res.Records = append(res.Records, rec)
	}
	return res, nil
}

// ctxErr prefers the context's error when the exchange failed because the
// context ended (the connection was closed under it).
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return context.DeadlineExceeded
	}
	return err
}

// recordsDiagnostic is the text of a non-surrogate diagnostic in a search or
// present response, or "".
func recordsDiagnostic(resp *ber.Packet) string {
	if d := child(resp, ber.ClassContext, tagNonSurrogateDiagnostic); d != nil {
		return defaultDiag(d)
	}
	if m := child(resp, ber.ClassContext, tagMultipleDiagnostics); m != nil && len(m.Children) > 0 {
		first := m.Children[0]
		if len(first.Children) > 0 && first.Children[0].Tag == ber.TagSequence {
			return defaultDiag(first.Children[0])
		}
		return defaultDiag(first)
	}
	return ""
}

// defaultDiag reads DefaultDiagFormat: the diagnostic set's OID, a condition
// number and additional information.
func defaultDiag(d *ber.Packet) string {
	var cond int64
	var info string
	for _, c := range d.Children {
		switch {
		case c.ClassType == ber.ClassUniversal && c.Tag == ber.TagInteger:
			cond = intOf(c)
		case c.ClassType == ber.ClassUniversal && c.TagType == ber.TypePrimitive && c.Tag != ber.TagObjectIdentifier:
			info = c.Data.String()
		}
	}
	s := "Bib-1 diagnostic " + strconv.FormatInt(cond, 10)
	if m, ok := bib1Diagnostics[cond]; ok {
		s += " (" + m + ")"
	}
	if info = strings.TrimSpace(info); info != "" {
		s += ": " + info
	}
	return s
}

// bib1Diagnostics are the Bib-1 conditions a cataloguer meets most.
var bib1Diagnostics = map[int64]string{
	1:   "permanent system error",
	2:   "temporary system error",
	14:  "system error presenting records",
	108: "malformed query",
	109: "database unavailable",
	114: "unsupported use attribute",
	235: "database does not exist",
	238: "record syntax not supported",
	239: "record syntax not supported",
}

// diagText is the first printable string anywhere under p.
func diagText(p *ber.Packet) string {
	if len(p.Children) == 0 {
		if s := p.Data.String(); p.TagType == ber.TypePrimitive && isPrintableASCII(s) {
			return strings.TrimSpace(s)
		}
		return ""
	}
	for _, c := range p.Children {
		if s := diagText(c); s != "" {
			return s
		}
	}
	return ""
}

func isPrintableASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// retrievalRecord digs the record's bytes out of a NamePlusRecord:
// record [1] { retrievalRecord [1] EXTERNAL { direct-reference, octet-aligned [1] } }.
// A surrogate diagnostic (record [1] { [2] ... }) is not a record.
func retrievalRecord(npr *ber.Packet) ([]byte, bool) {
	rec := child(npr, ber.ClassContext, 1)
	if rec == nil {
		return nil, false
	}
	rr := child(rec, ber.ClassContext, 1)
	if rr == nil {
		return nil, false
	}
	ext := rr
	if e := child(rr, ber.ClassUniversal, ber.TagExternal); e != nil {
		ext = e
	}
	if oa := child(ext, ber.ClassContext, 1); oa != nil {
		if oa.TagType == ber.TypePrimitive {
			return oa.Data.Bytes(), true
		}
		// A constructed OCTET STRING: its segments in order.
		var b bytes.Buffer
		for _, seg := range oa.Children {
			b.Write(seg.Data.Bytes())
		}
		return b.Bytes(), true
	}
	return nil, false
}

// readZRecord reads one record as the target's syntax has it. A binary record
// whose leader does not declare UTF-8 is read as UTF-8 when its bytes are, else
// as MARC-8 (catalog/marc's reader decides), so a target needs no setting.
func readZRecord(data []byte, t Target) (*marc.Record, error) {
	if t.Syntax == MARCXML || marc.Detect(data) == marc.FormatMARCXML {
		return marc.NewXMLReader(bytes.NewReader(data)).Next()
	}
	return marc.NewReader(bytes.NewReader(data)).Next()
}
