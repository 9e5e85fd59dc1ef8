package opac

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/catalog/marc"
	"github.com/stacks-ils/stacks/db"
)

// OAI-PMH 2.0 (https://www.openarchives.org/OAI/openarchivesprotocol.html) at
// /oai, so that discovery layers (VuFind, Aspen) harvest the catalogue: the six
// verbs, oai_dc and marc21 (MARCXML with an 852 field a copy giving its branch,
// call number and availability), resumption tokens, and deleted records kept
// for ever (deleted_records, migration 0011). There are no sets.

// OAI-PMH namespaces and schemas.
const (
	oaiNamespace   = "http://www.openarchives.org/OAI/2.0/"
	oaiSchema      = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"
	oaiDCNamespace = "http://www.openarchives.org/OAI/2.0/oai_dc/"
	oaiDCSchema    = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
	dcNamespace    = "http://purl.org/dc/elements/1.1/"
	marcSchema     = "http://www.loc.gov/standards/marcxml/schema/MARC21slim.xsd"
)

// oaiFormats are the metadata formats served, by prefix.
var oaiFormats = []struct{ Prefix, Schema, Namespace string }{
	{"oai_dc", oaiDCSchema, oaiDCNamespace},
	{"marc21", marcSchema, marc.Namespace},
}

func knownFormat(prefix string) bool {
	for _, f := range oaiFormats {
		if f.Prefix == prefix {
			return true
		}
	}
	return false
}

// oaiError is an OAI-PMH error condition: its code and a message for people.
type oaiError struct{ Code, Message string }

func (e *oaiError) Error() string { return e.Code + ": " + e.Message }

func badArgument(format string, args ...any) *oaiError {
	return &oaiError{"badArgument", fmt.Sprintf(format, args...)}
}

// oaiArgs are the arguments each verb allows (true: required).
var oaiArgs = map[string]map[string]bool{
	"Identify":            {},
	"ListMetadataFormats": {"identifier": false},
	"ListSets":            {"resumptionToken": false},
	"GetRecord":           {"identifier": true, "metadataPrefix": true},
	"ListIdentifiers":     {"metadataPrefix": true, "from": false, "until": false, "set": false, "resumptionToken": false},
	"ListRecords":         {"metadataPrefix": true, "from": false, "until": false, "set": false, "resumptionToken": false},
}

// oaiRequest is a request whose arguments are valid for its verb.
type oaiRequest struct {
	verb string
	args map[string]string
}

// parseOAI checks the verb and its arguments (from the URL's query or a posted
// form): an unknown or missing verb is badVerb; a repeated, unknown or missing
// argument is badArgument; a resumptionToken goes alone.
func parseOAI(form url.Values) (*oaiRequest, *oaiError) {
	verbs := form["verb"]
	if len(verbs) != 1 {
		return nil, &oaiError{"badVerb", "Give exactly one verb: Identify, ListMetadataFormats, ListSets, GetRecord, ListIdentifiers or ListRecords."}
	}
	allowed, ok := oaiArgs[verbs[0]]
	if !ok {
		return nil, &oaiError{"badVerb", fmt.Sprintf("%q is not an OAI-PMH verb.", verbs[0])}
	}
	req := &oaiRequest{verb: verbs[0], args: map[string]string{}}
	for name, vals := range form {
		if name == "verb" {
			continue
		}
		if _, ok := allowed[name]; !ok {
			return nil, badArgument("%s does not take the argument %q.", req.verb, name)
		}
		if len(vals) != 1 {
			return nil, badArgument("The argument %q is repeated.", name)
		}
		req.args[name] = vals[0]
	}
	if _, ok := req.args["resumptionToken"]; ok {
		if len(req.args) != 1 {
			return nil, badArgument("resumptionToken is an exclusive argument: send it alone with the verb.")
		}
		return req, nil
	}
	for name, required := range allowed {
		if _, ok := req.args[name]; required && !ok {
			return nil, badArgument("%s needs the argument %s.", req.verb, name)
		}
	}
	return req, nil
}

// parseDatestamp reads from or until: a day (YYYY-MM-DD) or a second
// (YYYY-MM-DDThh:mm:ssZ). A day as until means its end.
func parseDatestamp(s string, until bool) (time.Time, bool, error) {
	if t, err := time.Parse(db.DayFormat, s); err == nil {
		if until {
			t = t.Add(24*time.Hour - time.Second)
		}
		return t, true, nil
	}
	t, err := time.Parse(db.TimeFormat, s)
	return t, false, err
}

// harvestState is what a list request asks for, and what its resumption token
// carries to the next page.
type harvestState struct {
	prefix      string
	from, until time.Time
	afterID     int64
}

// token encodes the state as an opaque, URL-safe resumption token.
func (h harvestState) token() string {
	f, u := "", ""
	if !h.from.IsZero() {
		f = h.from.UTC().Format(db.TimeFormat)
	}
	if !h.until.IsZero() {
		u = h.until.UTC().Format(db.TimeFormat)
	}
	return base64.RawURLEncoding.EncodeToString([]byte("1|" + h.prefix + "|" + f + "|" + u + "|" + strconv.FormatInt(h.afterID, 10)))
}

var errBadToken = &oaiError{"badResumptionToken", "The resumption token is not valid (it may be damaged, or from another server): start the list again without it."}

func parseToken(tok string) (harvestState, *oaiError) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) > 200 {
		return harvestState{}, errBadToken
	}
	parts := strings.Split(string(b), "|")
	if len(parts) != 5 || parts[0] != "1" || !knownFormat(parts[1]) {
		return harvestState{}, errBadToken
	}
	h := harvestState{prefix: parts[1]}
	if parts[2] != "" {
		if h.from, err = time.Parse(db.TimeFormat, parts[2]); err != nil {
			return harvestState{}, errBadToken
		}
	}
	if parts[3] != "" {
		if h.until, err = time.Parse(db.TimeFormat, parts[3]); err != nil {
			return harvestState{}, errBadToken
		}
	}
	if h.afterID, err = strconv.ParseInt(parts[4], 10, 64); err != nil || h.afterID < 0 {
		return harvestState{}, errBadToken
	}
	return h, nil
}

// listState reads a list verb's arguments, or its token.
func listState(req *oaiRequest) (harvestState, *oaiError) {
	if tok, ok := req.args["resumptionToken"]; ok {
		return parseToken(tok)
	}
	h := harvestState{prefix: req.args["metadataPrefix"]}
	var fromDay, untilDay bool
	var err error
	if s, ok := req.args["from"]; ok {
		if h.from, fromDay, err = parseDatestamp(s, false); err != nil {
			return h, badArgument("from %q is not a date (YYYY-MM-DD) or a UTC time (YYYY-MM-DDThh:mm:ssZ).", s)
		}
	}
	if s, ok := req.args["until"]; ok {
		if h.until, untilDay, err = parseDatestamp(s, true); err != nil {
			return h, badArgument("until %q is not a date (YYYY-MM-DD) or a UTC time (YYYY-MM-DDThh:mm:ssZ).", s)
		}
	}
	_, hasFrom := req.args["from"]
	_, hasUntil := req.args["until"]
	if hasFrom && hasUntil {
		if fromDay != untilDay {
			return h, badArgument("from and until must have the same granularity.")
		}
		if h.from.After(h.until) {
			return h, badArgument("from is after until.")
		}
	}
	if _, ok := req.args["set"]; ok {
		return h, &oaiError{"noSetHierarchy", "This repository has no sets."}
	}
	if !knownFormat(h.prefix) {
		return h, &oaiError{"cannotDisseminateFormat", fmt.Sprintf("The metadata format %q is not served: use oai_dc or marc21.", h.prefix)}
	}
	return h, nil
}

// DefaultRepositoryID is the repository identifier when none is configured.
// It does not follow the base URL: adding or changing --opac-base-url later
// would otherwise rename every record a harvester holds.
const DefaultRepositoryID = "stacks"

// repositoryID is the middle part of OAI identifiers.
func (s *Server) repositoryID() string {
	if s.cfg.RepositoryID != "" {
		return s.cfg.RepositoryID
	}
	return DefaultRepositoryID
}

func (s *Server) oaiIdentifier(id int64) string {
	return "oai:" + s.repositoryID() + ":" + strconv.FormatInt(id, 10)
}

// recordOf reads a record id from an OAI identifier; an identifier of another
// repository, or not of this form, is idDoesNotExist.
func (s *Server) recordOf(identifier string) (int64, *oaiError) {
	rest, ok := strings.CutPrefix(identifier, "oai:"+s.repositoryID()+":")
	id, err := strconv.ParseInt(rest, 10, 64)
	if !ok || err != nil || id <= 0 || strconv.FormatInt(id, 10) != rest {
		return 0, &oaiError{"idDoesNotExist", fmt.Sprintf("%q is not an identifier of this repository.", identifier)}
	}
	return id, nil
}

// oaiWriter builds an answer in a buffer.
type oaiWriter struct{ bytes.Buffer }

func (w *oaiWriter) text(s string) { _ = xml.EscapeText(w, []byte(s)) }

func (w *oaiWriter) elem(name, value string) {
	w.WriteString("<" + name + ">")
	w.text(value)
	w.WriteString("</" + name + ">")
}

func oaiTime(t time.Time) string { return t.UTC().Format(db.TimeFormat) }

// handleOAI answers an OAI-PMH request, GET or POST. Errors are answers with
// status 200, as the protocol wants; only our own faults are 500.
func (s *Server) handleOAI(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "The request could not be read.", http.StatusBadRequest)
		return
	}
	base := s.baseURL(r) + "/oai"
	var body oaiWriter
	req, oerr := parseOAI(r.Form)
	if oerr == nil {
		var err error
		oerr, err = s.oaiVerb(r, req, &body)
		if errors.Is(err, catalog.ErrHarvestBusy) {
			// OAI-PMH's flow control: harvesters wait and retry.
			w.Header().Set("Retry-After", "10")
			http.Error(w, "The repository is busy: try again in a moment.", http.StatusServiceUnavailable)
			return
		}
		if err != nil {
			s.Logger.Error("oai", "verb", req.verb, "err", err)
			http.Error(w, "The repository could not answer; the problem has been logged. Try again later.", http.StatusInternalServerError)
			return
		}
	}
	var out oaiWriter
	out.WriteString(xml.Header)
	out.WriteString(`<OAI-PMH xmlns="` + oaiNamespace + `" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="` +
		oaiNamespace + " " + oaiSchema + `">` + "\n")
	out.elem("responseDate", oaiTime(time.Now()))
	out.WriteString("\n<request")
	// The request's arguments are echoed only when they were valid (badVerb and
	// badArgument answers carry none).
	if oerr == nil || (oerr.Code != "badVerb" && oerr.Code != "badArgument") {
		out.WriteString(` verb="` + req.verb + `"`)
		for _, name := range []string{"identifier", "metadataPrefix", "from", "until", "set", "resumptionToken"} {
			if v, ok := req.args[name]; ok {
				out.WriteString(" " + name + `="`)
				out.text(v)
				out.WriteString(`"`)
			}
		}
	}
	out.WriteString(">")
	out.text(base)
	out.WriteString("</request>\n")
	if oerr != nil {
		out.WriteString(`<error code="` + oerr.Code + `">`)
		out.text(oerr.Message)
		out.WriteString("</error>\n")
	} else {
		out.Write(body.Bytes())
	}
	out.WriteString("</OAI-PMH>\n")
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.Write(out.Bytes())
}

// oaiVerb writes the verb's element, or returns the OAI error to answer, or an
// internal error.
func (s *Server) oaiVerb(r *http.Request, req *oaiRequest, w *oaiWriter) (*oaiError, error) {
	ctx := r.Context()
	prefs, err := s.preferences(ctx)
	if err != nil {
		return nil, err
	}
	switch req.verb {
	case "Identify":
		earliest, err := s.Catalog.EarliestDatestamp(ctx)
		if err != nil {
			return nil, err
		}
		if earliest.IsZero() {
			earliest = s.DB.Now()
		}
		w.WriteString("<Identify>")
		w.elem("repositoryName", prefs.LibraryName)
		w.elem("baseURL", s.baseURL(r)+"/oai")
		w.elem("protocolVersion", "2.0")
		w.elem("adminEmail", s.adminEmail())
		w.elem("earliestDatestamp", oaiTime(earliest))
		w.elem("deletedRecord", "persistent")
		w.elem("granularity", "YYYY-MM-DDThh:mm:ssZ")
		w.WriteString("</Identify>\n")
		return nil, nil

	case "ListMetadataFormats":
		if ident, ok := req.args["identifier"]; ok {
			if oerr, err := s.oaiExists(r, ident); oerr != nil || err != nil {
				return oerr, err
			}
		}
		w.WriteString("<ListMetadataFormats>")
		for _, f := range oaiFormats {
			w.WriteString("<metadataFormat>")
			w.elem("metadataPrefix", f.Prefix)
			w.elem("schema", f.Schema)
			w.elem("metadataNamespace", f.Namespace)
			w.WriteString("</metadataFormat>")
		}
		w.WriteString("</ListMetadataFormats>\n")
		return nil, nil

	case "ListSets":
		if _, ok := req.args["resumptionToken"]; ok {
			return errBadToken, nil
		}
		return &oaiError{"noSetHierarchy", "This repository has no sets: harvest it whole, or by date with from and until."}, nil

	case "GetRecord":
		id, oerr := s.recordOf(req.args["identifier"])
		if oerr != nil {
			return oerr, nil
		}
		if !knownFormat(req.args["metadataPrefix"]) {
			return &oaiError{"cannotDisseminateFormat", fmt.Sprintf("The metadata format %q is not served: use oai_dc or marc21.", req.args["metadataPrefix"])}, nil
		}
		h, err := s.Catalog.HarvestRecord(ctx, id)
		if stacks.ErrorCode(err) == stacks.ENOTFOUND {
			return &oaiError{"idDoesNotExist", fmt.Sprintf("There is no record %s.", req.args["identifier"])}, nil
		} else if err != nil {
			return nil, err
		}
		w.WriteString("<GetRecord>")
		if err := s.oaiRecord(r, w, &h, req.args["metadataPrefix"], prefs.Location); err != nil {
			return nil, err
		}
		w.WriteString("</GetRecord>\n")
		return nil, nil

	case "ListIdentifiers", "ListRecords":
		st, oerr := listState(req)
		if oerr != nil {
			return oerr, nil
		}
		records := req.verb == "ListRecords"
		// A page of 100 records is about 300 KB of MARCXML; headers are small.
		limit := 5 * s.cfg.OAIPageSize
		if records {
			limit = s.cfg.OAIPageSize
		}
		page, more, err := s.Catalog.Harvest(ctx, catalog.HarvestQuery{From: st.from, Until: st.until, AfterID: st.afterID, Limit: limit, WithRecords: records})
		if err != nil {
			return nil, err
		}
		if _, resumed := req.args["resumptionToken"]; resumed && len(page) == 0 {
			// The records after the token's were edited out of the list's dates
			// since the last page: the list ends here. The schema wants at least
			// one record a page, so the token's own record (live or deleted:
			// deleted_records keeps it) is sent again, with the empty token that
			// completes the list. A token whose record never was is not ours.
			h, err := s.Catalog.HarvestRecord(ctx, st.afterID)
			page = []catalog.HarvestRecord{h}
			if stacks.ErrorCode(err) == stacks.ENOTFOUND {
				return errBadToken, nil
			} else if err != nil {
				return nil, err
			}
			more = false
		}
		if len(page) == 0 {
			return &oaiError{"noRecordsMatch", "No records match: the catalogue has none changed between from and until."}, nil
		}
		w.WriteString("<" + req.verb + ">\n")
		for i := range page {
			if records {
				// One record that cannot be written (a source the export cannot
				// read) is logged and left out: the rest of the page, and the
				// harvest, go on.
				var one oaiWriter
				if err := s.oaiRecord(r, &one, &page[i], st.prefix, prefs.Location); err != nil {
					s.Logger.Error("oai: record left out of a list", "record", page[i].ID, "format", st.prefix, "err", err)
					continue
				}
				w.Write(one.Bytes())
			} else {
				s.oaiHeader(w, &page[i])
			}
		}
		// A last page after earlier ones ends with an empty token, as the
		// protocol asks; a list that fits in one page has none.
		if more {
			st.afterID = page[len(page)-1].ID
			w.elem("resumptionToken", st.token())
		} else if _, resumed := req.args["resumptionToken"]; resumed {
			w.WriteString("<resumptionToken/>")
		}
		w.WriteString("</" + req.verb + ">\n")
		return nil, nil
	}
	return &oaiError{"badVerb", "Unknown verb."}, nil
}

// oaiService is what the OAI-PMH repository needs of the catalogue. A
// harvest's reads run on heavy-read slots within Config.OAITimeout; a read
// refused or stopped is catalog.ErrHarvestBusy, answered 503 with Retry-After.
type oaiService interface {
	EarliestDatestamp(ctx context.Context) (time.Time, error)
	Harvest(ctx context.Context, q catalog.HarvestQuery) ([]catalog.HarvestRecord, bool, error)
	HarvestRecord(ctx context.Context, id int64) (catalog.HarvestRecord, error)
	RecordKnown(ctx context.Context, id int64) (bool, error)
}

// oaiExists checks that an identifier names a record, live or deleted.
func (s *Server) oaiExists(r *http.Request, identifier string) (*oaiError, error) {
	id, oerr := s.recordOf(identifier)
	if oerr != nil {
		return oerr, nil
	}
	known, err := s.Catalog.RecordKnown(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if !known {
		return &oaiError{"idDoesNotExist", fmt.Sprintf("There is no record %s.", identifier)}, nil
	}
	return nil, nil
}

func (s *Server) oaiHeader(w *oaiWriter, h *catalog.HarvestRecord) {
	if h.Deleted {
		w.WriteString(`<header status="deleted">`)
	} else {
		w.WriteString("<header>")
	}
	w.elem("identifier", s.oaiIdentifier(h.ID))
	w.elem("datestamp", oaiTime(h.Datestamp))
	w.WriteString("</header>\n")
}

// oaiRecord writes a record: its header, and its metadata unless deleted.
func (s *Server) oaiRecord(r *http.Request, w *oaiWriter, h *catalog.HarvestRecord, prefix string, loc *time.Location) error {
	w.WriteString("<record>")
	s.oaiHeader(w, h)
	if h.Deleted {
		w.WriteString("</record>\n")
		return nil
	}
	w.WriteString("<metadata>")
	switch prefix {
	case "marc21":
		rec, err := h.MARC(s.repositoryID(), loc)
		if err != nil {
			return fmt.Errorf("record %d as MARC: %w", h.ID, err)
		}
		x, err := marc.ToXML(rec)
		if err != nil {
			return fmt.Errorf("record %d as MARCXML: %w", h.ID, err)
		}
		w.WriteString(x)
	default:
		s.oaiDC(r, w, h, loc)
	}
	w.WriteString("</metadata></record>\n")
	return nil
}

// oaiDC writes a record as unqualified Dublin Core, with its permanent link
// and ISBN as identifiers and its copies' availability as a description.
func (s *Server) oaiDC(r *http.Request, w *oaiWriter, h *catalog.HarvestRecord, loc *time.Location) {
	w.WriteString(`<oai_dc:dc xmlns:oai_dc="` + oaiDCNamespace + `" xmlns:dc="` + dcNamespace + `" xsi:schemaLocation="` + oaiDCNamespace + " " + oaiDCSchema + `">`)
	dc := func(name, value string) {
		if value != "" {
			w.elem("dc:"+name, value)
		}
	}
	dc("title", h.Bib.Title)
	dc("creator", h.Bib.Author)
	for _, subj := range h.Bib.Subjects {
		dc("subject", subj)
	}
	dc("publisher", h.Bib.Publisher)
	if h.Bib.Year > 0 {
		dc("date", strconv.Itoa(h.Bib.Year))
	}
	dc("type", "Text")
	dc("identifier", s.baseURL(r)+recordURL(h.ID))
	if h.Bib.ISBN != "" {
		dc("identifier", "urn:isbn:"+h.Bib.ISBN)
	}
	for _, c := range h.Copies {
		due := ""
		if !c.DueAt.IsZero() {
			due = c.DueAt.In(loc).Format(db.DayFormat)
		}
		text := c.BranchName + ": " + catalog.PublicStatus(c.Status, due)
		if c.CallNumber != "" {
			text += " (" + c.CallNumber + ")"
		}
		dc("description", text)
	}
	w.WriteString("</oai_dc:dc>")
}

// adminEmail is the address Identify gives for the repository's administrator.
func (s *Server) adminEmail() string {
	if s.cfg.AdminEmail != "" {
		return s.cfg.AdminEmail
	}
	return "admin@" + s.repositoryID() + ".invalid"
}
