package copycat

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/stacks-ils/stacks/catalog/marc"
)

// maxSRUResponse bounds the bytes read from one SRU answer: fifty MARCXML records
// take well under a megabyte.
const maxSRUResponse = 32 << 20

// The CQL indexes an SRU target is searched with when it names none: the Bath
// profile's ISBN and Dublin Core's title and creator, which the Library of
// Congress, yaz-ztest and most SRU servers answer.
const (
	defaultISBNIndex   = "bath.isbn"
	defaultTitleIndex  = "dc.title"
	defaultAuthorIndex = "dc.creator"
)

// cqlQuery writes q as a CQL query for t: index="term" with the term quoted, so
// words and punctuation in a title stay one term.
func cqlQuery(t Target, q Query) string {
	index := ""
	switch q.Field {
	case ISBN:
		index = or(t.ISBNIndex, defaultISBNIndex)
	case Title:
		index = or(t.TitleIndex, defaultTitleIndex)
	case Author:
		index = or(t.AuthorIndex, defaultAuthorIndex)
	}
	var b strings.Builder
	b.WriteString(index)
	b.WriteString("=\"")
	for _, r := range q.Term {
		// In a quoted CQL term a backslash escapes; a quote or a backslash,
		// and the masking characters * ? ^, are taken literally when escaped.
		if strings.ContainsRune(`"\*?^`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func or(s, def string) string {
	if s = strings.TrimSpace(s); s != "" {
		return s
	}
	return def
}

// sruURL is the searchRetrieve request for q at t, asking for max MARCXML
// records. Parameters already in the target's URL (an x-username, say) are kept.
func sruURL(t Target, q Query, max int) (string, error) {
	u, err := url.Parse(t.Address)
	if err != nil {
		return "", err
	}
	v := u.Query()
	v.Set("version", "1.1")
	v.Set("operation", "searchRetrieve")
	v.Set("query", cqlQuery(t, q))
	v.Set("startRecord", "1")
	v.Set("maximumRecords", strconv.Itoa(max))
	v.Set("recordSchema", "marcxml")
	v.Set("recordPacking", "xml")
	u.RawQuery = v.Encode()
	return u.String(), nil
}

// SRU's response elements (versions 1.1 and 1.2; 2.0's namespace differs but
// its elements are the same). Names are matched by local name, so any
// namespace prefix is read.
type sruResponse struct {
	XMLName         xml.Name
	NumberOfRecords string          `xml:"numberOfRecords"`
	Records         []sruRecord     `xml:"records>record"`
	Diagnostics     []sruDiagnostic `xml:"diagnostics>diagnostic"`
}

type sruRecord struct {
	Schema  string        `xml:"recordSchema"`
	Packing string        `xml:"recordPacking"`
	Data    sruRecordData `xml:"recordData"`
}

type sruRecordData struct {
	Inner []byte `xml:",innerxml"`
	Text  string `xml:",chardata"`
}

type sruDiagnostic struct {
	URI     string `xml:"uri"`
	Message string `xml:"message"`
	Details string `xml:"details"`
}

func (d sruDiagnostic) String() string {
	s := strings.TrimSpace(d.Message)
	if s == "" {
		s = "diagnostic " + strings.TrimSpace(d.URI)
	}
	if det := strings.TrimSpace(d.Details); det != "" {
		s += " (" + det + ")"
	}
	return s
}

// searchSRU runs q at the SRU target t. ctx bounds the whole exchange.
func searchSRU(ctx context.Context, client *http.Client, t Target, q Query, max int) (Result, error) {
	res := Result{Target: t}
	u, err := sruURL(t, q, max)
	if err != nil {
		return res, fmt.Errorf("its URL %q cannot be read: %w", t.Address, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return res, err
	}
	req.Header.Set("Accept", "text/xml, application/xml")
	resp, err := client.Do(req)
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSRUResponse+1))
	if err != nil {
		return res, err
	}
	if len(body) > maxSRUResponse {
		return res, notProtocol("answered more than %d MB", maxSRUResponse>>20)
	}
	sr, perr := parseSRU(body)
	if resp.StatusCode != http.StatusOK && (perr != nil || len(sr.Diagnostics) == 0) {
		return res, notProtocol("answered HTTP %s, not an SRU response", resp.Status)
	}
	if perr != nil {
		return res, perr
	}
	if len(sr.Diagnostics) > 0 && len(sr.Records) == 0 {
		return res, &diagnosticError{reason: "reported " + sr.Diagnostics[0].String()}
	}
	res.Total, _ = strconv.Atoi(strings.TrimSpace(sr.NumberOfRecords))
	// A target may return more records than asked: the first max are kept.
	for _, r := range sr.Records[:min(len(sr.Records), max)] {
		rec, err := sruMARC(r)
		if err != nil {
			res.Skipped++
			continue
		}
		res.Records = append(res.Records, rec)
	}
	return res, nil
}

// parseSRU reads a searchRetrieveResponse; anything else is a protocolError.
func parseSRU(body []byte) (sruResponse, error) {
	var sr sruResponse
	d := xml.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&sr); err != nil {
		return sr, notProtocol("answered something that is not SRU (%s)", shortXMLError(err))
	}
	if sr.XMLName.Local != "searchRetrieveResponse" {
		return sr, notProtocol("answered something that is not SRU (a <%s> document)", sr.XMLName.Local)
	}
	if strings.TrimSpace(sr.NumberOfRecords) == "" && len(sr.Diagnostics) == 0 {
		return sr, notProtocol("answered something that is not SRU (no numberOfRecords)")
	}
	return sr, nil
}

func shortXMLError(err error) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("line %d: %s", se.Line, se.Msg)
	}
	if errors.Is(err, io.EOF) {
		return "empty answer"
	}
	return err.Error()
}

// sruMARC reads the MARCXML record in r; a record in another schema, or a
// surrogate diagnostic, is an error.
func sruMARC(r sruRecord) (*marc.Record, error) {
	data := r.Data.Inner
	if strings.EqualFold(strings.TrimSpace(r.Packing), "string") {
		data = []byte(r.Data.Text)
	}
	rec, err := marc.NewXMLReader(bytes.NewReader(data)).Next()
	if err != nil {
		return nil, err
	}
	return rec, nil
}
