package opac_test

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/opac"
)

// validateOAI validates an answer with xmllint against the OAI-PMH 2.0 schema
// and the schemas of its metadata formats (testdata/oai/validate.xsd).
func validateOAI(t *testing.T, body string) error {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatal("xmllint not found: run scripts/test-deps.sh (it installs Debian's libxml2-utils)")
	}
	f := filepath.Join(t.TempDir(), "answer.xml")
	if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", "testdata/oai/validate.xsd", f).CombinedOutput()
	if err != nil {
		return &validationError{string(out)}
	}
	return nil
}

type validationError struct{ out string }

func (e *validationError) Error() string { return e.out }

var oaiErrorCode = regexp.MustCompile(`<error code="([a-zA-Z]+)">`)

// oai asks the repository and returns the answer and its error code, if any.
func (e *testEnv) oai(t *testing.T, query string) (response, string) {
	t.Helper()
	r := e.get(t, e.client(), "/oai?"+query)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/xml") {
		t.Fatalf("%s: %d %s\n%s", query, r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	code := ""
	if m := oaiErrorCode.FindStringSubmatch(r.Body); m != nil {
		code = m[1]
	}
	return r, code
}

func TestOAIValidates(t *testing.T) {
	e := newEnv(t)
	e.checkout(t, "P0001", "I00010")
	id := strconv.FormatInt(e.recordOf(t, "I00010"), 10)
	deleted := e.deleteRecord(t)
	for _, tc := range []struct{ query, code string }{
		{"verb=Identify", ""},
		{"verb=ListMetadataFormats", ""},
		{"verb=ListMetadataFormats&identifier=oai:stacks:" + id, ""},
		{"verb=ListMetadataFormats&identifier=oai:stacks:99999999", "idDoesNotExist"},
		{"verb=ListSets", "noSetHierarchy"},
		{"verb=GetRecord&metadataPrefix=oai_dc&identifier=oai:stacks:" + id, ""},
		{"verb=GetRecord&metadataPrefix=marc21&identifier=oai:stacks:" + id, ""},
		{"verb=GetRecord&metadataPrefix=marc21&identifier=oai:stacks:" + deleted, ""},
		{"verb=GetRecord&metadataPrefix=marc21&identifier=oai:elsewhere:" + id, "idDoesNotExist"},
		{"verb=GetRecord&metadataPrefix=mods&identifier=oai:stacks:" + id, "cannotDisseminateFormat"},
		{"verb=GetRecord&identifier=oai:stacks:" + id, "badArgument"},
		{"verb=ListIdentifiers&metadataPrefix=oai_dc", ""},
		{"verb=ListRecords&metadataPrefix=oai_dc", ""},
		{"verb=ListRecords&metadataPrefix=marc21", ""},
		{"verb=ListRecords&metadataPrefix=marc21&from=2000-01-01&until=2099-12-31", ""},
		{"verb=ListRecords&metadataPrefix=marc21&from=2099-01-01", "noRecordsMatch"},
		{"verb=ListRecords&metadataPrefix=marc21&from=2020-01-01&until=2019-01-01", "badArgument"},
		{"verb=ListRecords&metadataPrefix=marc21&from=2020-01-01&until=2021-01-01T00:00:00Z", "badArgument"},
		{"verb=ListRecords&metadataPrefix=marc21&from=yesterday", "badArgument"},
		{"verb=ListRecords&metadataPrefix=marc21&set=CEN", "noSetHierarchy"},
		{"verb=ListRecords&resumptionToken=bm90IGEgdG9rZW4", "badResumptionToken"},
		{"verb=ListRecords&resumptionToken=x&metadataPrefix=oai_dc", "badArgument"},
		{"verb=ListRecords&metadataPrefix=oai_dc&metadataPrefix=marc21", "badArgument"},
		{"verb=ListRecords&metadataPrefix=oai_dc&color=red", "badArgument"},
		{"verb=Destroy", "badVerb"},
		{"", "badVerb"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r, code := e.oai(t, tc.query)
			if code != tc.code {
				t.Errorf("error code %q, want %q\n%s", code, tc.code, r.Body)
			}
			if err := validateOAI(t, r.Body); err != nil {
				t.Errorf("does not validate:\n%v\n%s", err, r.Body)
			}
			if n := statements(t, r); n >= 10 {
				t.Errorf("%d statements", n)
			}
		})
	}
	t.Run("ErrInvalidIsCaught", func(t *testing.T) {
		// The validation is not vacuous: an answer with metadata that breaks its
		// format's schema, and one missing its request, fail.
		// Each case breaks one thing in one answer.
		marc21, _ := e.oai(t, "verb=GetRecord&metadataPrefix=marc21&identifier=oai:stacks:"+id)
		dc, _ := e.oai(t, "verb=GetRecord&metadataPrefix=oai_dc&identifier=oai:stacks:"+id)
		for _, tc := range []struct{ name, body, broken string }{
			{"MARCTag", marc21.Body, strings.Replace(marc21.Body, `tag="245"`, `tag="24X5"`, 1)},
			{"NoRequest", marc21.Body, regexp.MustCompile(`<request[^>]*>[^<]*</request>`).ReplaceAllString(marc21.Body, "")},
			{"DCElement", dc.Body, strings.Replace(dc.Body, "<dc:title>", "<dc:titel>", 1)},
			{"Datestamp", dc.Body, strings.Replace(dc.Body, "<datestamp>", "<datestamp>x", 1)},
		} {
			if tc.broken == tc.body {
				t.Fatalf("%s: the test's change did not apply", tc.name)
			}
			if validateOAI(t, tc.broken) == nil {
				t.Errorf("%s: a broken answer validated:\n%s", tc.name, tc.broken)
			}
		}
	})
	t.Run("Availability", func(t *testing.T) {
		r, _ := e.oai(t, "verb=GetRecord&metadataPrefix=marc21&identifier=oai:stacks:"+id)
		if !strings.Contains(r.Body, `<datafield tag="852"`) || !strings.Contains(r.Body, `<subfield code="z">On loan until 2026-12-21</subfield>`) ||
			!strings.Contains(r.Body, `<subfield code="h">SF LEG</subfield>`) {
			t.Errorf("no 852 with the call number and availability:\n%s", r.Body)
		}
		r, _ = e.oai(t, "verb=GetRecord&metadataPrefix=oai_dc&identifier=oai:stacks:"+id)
		if !strings.Contains(r.Body, "<dc:description>Central: On loan until 2026-12-21 (SF LEG)</dc:description>") ||
			!strings.Contains(r.Body, "<dc:identifier>"+e.Srv.URL+"/records/"+id+"</dc:identifier>") {
			t.Errorf("oai_dc without availability or permanent link:\n%s", r.Body)
		}
	})
}

// deleteRecord adds a record and deletes it, as a future "delete record" or a
// hand-run statement would, and returns its id: the trigger of migration 0011
// remembers it.
func (e *testEnv) deleteRecord(t *testing.T) string {
	t.Helper()
	var id int64
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		id, err = catalog.CreateRecord(tx, stacks.System, catalog.RecordInput{Title: "A record to delete", Author: "Nobody"})
		if err != nil {
			return err
		}
		_, err = tx.Exec(`DELETE FROM records WHERE id = ?`, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(id, 10)
}

type oaiList struct {
	Headers []struct {
		Identifier string `xml:"identifier"`
		Status     string `xml:"status,attr"`
	} `xml:"ListIdentifiers>header"`
	Records []struct {
		Header struct {
			Identifier string `xml:"identifier"`
			Status     string `xml:"status,attr"`
		} `xml:"header"`
		Metadata *struct {
			Inner string `xml:",innerxml"`
		} `xml:"metadata"`
	} `xml:"ListRecords>record"`
	TokenIDs string `xml:"ListIdentifiers>resumptionToken"`
	TokenRec string `xml:"ListRecords>resumptionToken"`
}

// TestOAIHarvest harvests the whole catalogue through resumption tokens, as a
// discovery layer does, and finds every record once, the deleted one as
// deleted.
func TestOAIHarvest(t *testing.T) {
	e := newEnv(t)
	deleted := e.deleteRecord(t)
	var total int
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM records`).Scan(&total)
	}); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"ListIdentifiers", "ListRecords"} {
		t.Run(verb, func(t *testing.T) {
			seen := map[string]bool{}
			pages := 0
			query := "verb=" + verb + "&metadataPrefix=oai_dc"
			for {
				r, code := e.oai(t, query)
				if code != "" {
					t.Fatalf("page %d: %s\n%s", pages, code, r.Body)
				}
				pages++
				var l oaiList
				if err := xml.Unmarshal([]byte(r.Body), &l); err != nil {
					t.Fatal(err)
				}
				tok := l.TokenIDs
				for _, h := range l.Headers {
					if seen[h.Identifier] {
						t.Errorf("%s twice", h.Identifier)
					}
					seen[h.Identifier] = true
					if (h.Status == "deleted") != (h.Identifier == "oai:stacks:"+deleted) {
						t.Errorf("%s status %q", h.Identifier, h.Status)
					}
				}
				if verb == "ListRecords" {
					tok = l.TokenRec
					for _, rec := range l.Records {
						seen[rec.Header.Identifier] = true
						if isDeleted := rec.Header.Identifier == "oai:stacks:"+deleted; isDeleted != (rec.Header.Status == "deleted") || isDeleted != (rec.Metadata == nil) {
							t.Errorf("%s: status %q, metadata %v", rec.Header.Identifier, rec.Header.Status, rec.Metadata != nil)
						}
					}
				}
				if tok == "" {
					break
				}
				query = "verb=" + verb + "&resumptionToken=" + url.QueryEscape(tok)
			}
			if len(seen) != total+1 {
				t.Errorf("harvested %d records in %d pages, want %d and the deleted one", len(seen), pages, total)
			}
			if verb == "ListRecords" && pages < 2 {
				t.Errorf("ListRecords took %d page: the resumption tokens were not used", pages)
			}
		})
	}
	t.Run("ByDate", func(t *testing.T) {
		// The records the demo made are dated before the clock; one edited now
		// is the only one from today.
		id := e.recordOf(t, "I00001")
		err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
			in, err := catalog.RecordInputOf(tx, id)
			if err != nil {
				return err
			}
			in.Title += " (edited)"
			return catalog.UpdateRecord(tx, stacks.System, id, in)
		})
		if err != nil {
			t.Fatal(err)
		}
		r, code := e.oai(t, "verb=ListIdentifiers&metadataPrefix=marc21&from=2026-11-30")
		var l oaiList
		xml.Unmarshal([]byte(r.Body), &l)
		found := false
		for _, h := range l.Headers {
			found = found || h.Identifier == "oai:stacks:"+strconv.FormatInt(id, 10)
		}
		if code != "" || !found {
			t.Errorf("the record edited today is not harvested from today (%s):\n%s", code, r.Body)
		}
	})
}

// TestOAIBusy: harvest reads run on the heavy-read slots, as searches do;
// when every slot is taken the answer is 503 with Retry-After, and the desk
// keeps its connections.
func TestOAIBusy(t *testing.T) {
	e := newEnv(t)
	dbtest.TakeHeavySlots(t, e.DB)
	id := strconv.FormatInt(e.recordOf(t, "I00010"), 10)
	for _, q := range []string{"verb=ListRecords&metadataPrefix=marc21", "verb=ListIdentifiers&metadataPrefix=oai_dc",
		"verb=GetRecord&metadataPrefix=oai_dc&identifier=oai:stacks:" + id} {
		r := e.get(t, e.client(), "/oai?"+q)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Errorf("%s with every heavy-read slot taken: %d, Retry-After %q", q, r.Status, r.Header.Get("Retry-After"))
		}
	}
}

// TestOAIHostileValues: values that XML cannot carry as they are (written
// before the catalogue refused them, or imported) are cleaned in both formats;
// markup characters are escaped.
func TestOAIHostileValues(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var bad, markup int64
	err := e.DB.Write(ctx, func(tx *db.Tx) error {
		var err error
		if bad, err = catalog.CreateRecord(tx, stacks.System, catalog.RecordInput{Title: "Placeholder", Author: "X"}); err != nil {
			return err
		}
		// As an old row or a hand-run statement could hold it.
		if _, err = tx.Exec(`UPDATE records SET title = ?, author = ? WHERE id = ?`, "Bad \uFFFE title", "Nul\x01l", bad); err != nil {
			return err
		}
		if markup, err = catalog.CreateRecord(tx, stacks.System, catalog.RecordInput{Title: `Tom & Jerry <b>]]></b>`, Author: `"Q" & <A>`}); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{bad, markup} {
		for _, f := range []string{"marc21", "oai_dc"} {
			q := "verb=GetRecord&metadataPrefix=" + f + "&identifier=oai:stacks:" + strconv.FormatInt(id, 10)
			r, code := e.oai(t, q)
			if code != "" {
				t.Errorf("%s: %s", q, code)
			}
			if err := validateOAI(t, r.Body); err != nil {
				t.Errorf("%s does not validate:\n%v\n%s", q, err, r.Body)
			}
			if strings.Contains(r.Body, "\uFFFE") || strings.Contains(r.Body, "<b>") || strings.Contains(r.Body, "]]>") {
				t.Errorf("%s: a value is not cleaned or escaped:\n%s", q, r.Body)
			}
			if id == markup && !strings.Contains(r.Body, "Tom &amp; Jerry &lt;b&gt;") {
				t.Errorf("%s: the title is not there, escaped:\n%s", q, r.Body)
			}
		}
	}
}

// TestOAIDatestampCopies: a record's datestamp moves when a copy is added or
// withdrawn (marc21 carries its copies), not when one is lent.
func TestOAIDatestampCopies(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.Clock.Advance(time.Hour)
	since := e.Clock.Now().UTC().Format(db.TimeFormat)
	added, withdrawn, lent := e.recordOf(t, "I00001"), e.recordOf(t, "I00003"), e.recordOf(t, "I00005")
	err := e.DB.Write(ctx, func(tx *db.Tx) error {
		if _, err := catalog.AddItem(tx, stacks.System, added, catalog.ItemInput{Barcode: "N00001", ItemTypeCode: "BOOK", HomeBranchCode: "CEN"}); err != nil {
			return fmt.Errorf("add: %w", err)
		}
		it, err := catalog.FindItemByBarcode(tx, "I00003")
		if err != nil {
			return fmt.Errorf("find: %w", err)
		}
		d, err := catalog.FindItemDetails(tx, it.ID)
		if err != nil {
			return fmt.Errorf("details: %w", err)
		}
		if _, err := catalog.UpdateItem(tx, stacks.System, it.ID, d.Input, catalog.StatusWithdrawn); err != nil {
			return fmt.Errorf("withdraw: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e.checkout(t, "P0001", "I00005")
	r, code := e.oai(t, "verb=ListIdentifiers&metadataPrefix=marc21&from="+since)
	var l oaiList
	if err := xml.Unmarshal([]byte(r.Body), &l); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, h := range l.Headers {
		got[h.Identifier] = true
	}
	for id, want := range map[int64]bool{added: true, withdrawn: true, lent: false} {
		if ident := "oai:stacks:" + strconv.FormatInt(id, 10); got[ident] != want {
			t.Errorf("%s harvested from %s: %v, want %v (code %q)", ident, since, got[ident], want, code)
		}
	}
}

// TestDeletedIDReserved: the id of a deleted record, the largest one included,
// is never given to a new record, so its OAI identifier and permanent link
// never name another book.
func TestDeletedIDReserved(t *testing.T) {
	e := newEnv(t)
	deleted := e.deleteRecord(t)
	var id int64
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		id, err = catalog.CreateRecord(tx, stacks.System, catalog.RecordInput{Title: "A new book", Author: "Somebody"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if strconv.FormatInt(id, 10) == deleted {
		t.Fatalf("the new record got the deleted record's id %s", deleted)
	}
	err = e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO records (id, title, author, isbn, publisher, subjects, created_at, updated_at)
			VALUES (?, 'By hand', '', '', '', '', '2026-11-30T10:00:00Z', '2026-11-30T10:00:00Z')`, deleted)
		return err
	})
	if err == nil {
		t.Error("a statement run by hand reused a deleted record's id")
	}
	r, code := e.oai(t, "verb=GetRecord&metadataPrefix=oai_dc&identifier=oai:stacks:"+deleted)
	if code != "" || !strings.Contains(r.Body, `<header status="deleted">`) {
		t.Errorf("the deleted record is no longer deleted (%q):\n%s", code, r.Body)
	}
}

// TestOAIRepositoryID: identifiers do not follow the base URL, so setting it
// after a first harvest renames nothing; --oai-repository-id sets them.
func TestOAIRepositoryID(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		cfg  opac.Config
		want string
	}{
		{"Default", opac.Config{DB: e.DB}, "oai:stacks:"},
		{"BaseURLDoesNotRename", opac.Config{DB: e.DB, BaseURL: "https://catalogue.example.org"}, "oai:stacks:"},
		{"Given", opac.Config{DB: e.DB, BaseURL: "https://catalogue.example.org", RepositoryID: "library.example.org"}, "oai:library.example.org:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(opac.New(tc.cfg))
			defer srv.Close()
			r := do(t, e.client(), mustRequest(t, srv.URL+"/oai?verb=ListIdentifiers&metadataPrefix=oai_dc"))
			if !strings.Contains(r.Body, "<identifier>"+tc.want) {
				t.Errorf("identifiers are not %s...:\n%.600s", tc.want, r.Body)
			}
		})
	}
}

func mustRequest(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestOAIResumedEmptyPage: when every record after a token's has been edited
// out of the list's dates since the last page, the resumed list ends properly,
// with a valid answer and an empty token, not badResumptionToken.
func TestOAIResumedEmptyPage(t *testing.T) {
	e := newEnv(t)
	until := e.Clock.Now().UTC().Format(db.TimeFormat)
	r, code := e.oai(t, "verb=ListRecords&metadataPrefix=oai_dc&until="+until)
	var l oaiList
	if err := xml.Unmarshal([]byte(r.Body), &l); err != nil || code != "" || l.TokenRec == "" {
		t.Fatalf("first page: %q, %v, token %q", code, err, l.TokenRec)
	}
	last := l.Records[len(l.Records)-1].Header.Identifier
	lastID, _ := strconv.ParseInt(strings.TrimPrefix(last, "oai:stacks:"), 10, 64)
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE records SET updated_at = '2027-01-01T00:00:00Z' WHERE id > ?`, lastID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r, code = e.oai(t, "verb=ListRecords&resumptionToken="+url.QueryEscape(l.TokenRec))
	if code != "" || !strings.Contains(r.Body, "<resumptionToken/>") {
		t.Errorf("resumed list with nothing left: %q\n%s", code, r.Body)
	}
	if err := validateOAI(t, r.Body); err != nil {
		t.Errorf("does not validate:\n%v\n%s", err, r.Body)
	}
	// A token naming a record that never was is not one of ours.
	if _, code := e.oai(t, "verb=ListRecords&resumptionToken=MXxvYWlfZGN8fHw5OTk5OTk5"); code != "badResumptionToken" {
		t.Errorf("a made-up token: %q", code)
	}
}

// TestOAIPrivateFields: marc21 leaves out the library's private fields and the
// copies' barcodes, as the patrons' pages do.
func TestOAIPrivateFields(t *testing.T) {
	e := newEnv(t)
	id := e.recordOf(t, "I00010")
	source := `<record xmlns="http://www.loc.gov/MARC21/slim"><leader>00000nam a2200000 a 4500</leader>` +
		`<datafield tag="500" ind1=" " ind2=" "><subfield code="a">A public note.</subfield></datafield>` +
		`<datafield tag="541" ind1="0" ind2=" "><subfield code="a">Private donor</subfield></datafield>` +
		`<datafield tag="541" ind1="1" ind2=" "><subfield code="a">Public donor</subfield></datafield>` +
		`<datafield tag="561" ind1="0" ind2=" "><subfield code="a">Private provenance</subfield></datafield>` +
		`<datafield tag="583" ind1="0" ind2=" "><subfield code="a">Private action</subfield></datafield>` +
		`<datafield tag="952" ind1=" " ind2=" "><subfield code="p">OLD123</subfield></datafield>` +
		`<datafield tag="999" ind1=" " ind2=" "><subfield code="a">Local staff note</subfield></datafield>` +
		`</record>`
	err := e.DB.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`UPDATE records SET marc = ? WHERE id = ?`, source, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.oai(t, "verb=GetRecord&metadataPrefix=marc21&identifier=oai:stacks:"+strconv.FormatInt(id, 10))
	for _, want := range []string{"A public note.", "Public donor", `<datafield tag="852"`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("no %q:\n%s", want, r.Body)
		}
	}
	for _, private := range []string{"Private donor", "Private provenance", "Private action", "Local staff note", "OLD123", "I00010", `code="p"`} {
		if strings.Contains(r.Body, private) {
			t.Errorf("%q is published:\n%s", private, r.Body)
		}
	}
}

// TestOAIEditsBetweenPages: records edited or added between two pages of a
// harvest are neither lost nor sent twice (the token carries the last id, and
// the list is in id order), and until leaves out records changed after it.
func TestOAIEditsBetweenPages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	until := e.Clock.Now().UTC().Format(db.TimeFormat)
	var total int
	if err := e.DB.Read(ctx, func(tx *db.Tx) error { return tx.QueryRow(`SELECT count(*) FROM records`).Scan(&total) }); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Hour)
	edit := func(id int64) {
		t.Helper()
		err := e.DB.Write(ctx, func(tx *db.Tx) error {
			in, err := catalog.RecordInputOf(tx, id)
			if err != nil {
				return err
			}
			in.Title += " (edited)"
			return catalog.UpdateRecord(tx, stacks.System, id, in)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	harvest := func(query string, between func(page int, l oaiList)) map[string]int {
		t.Helper()
		seen := map[string]int{}
		for page := 0; ; page++ {
			r, code := e.oai(t, query)
			if code != "" {
				t.Fatalf("page %d: %s", page, code)
			}
			var l oaiList
			if err := xml.Unmarshal([]byte(r.Body), &l); err != nil {
				t.Fatal(err)
			}
			for _, rec := range l.Records {
				seen[rec.Header.Identifier]++
			}
			if l.TokenRec == "" {
				return seen
			}
			if between != nil {
				between(page, l)
			}
			query = "verb=ListRecords&resumptionToken=" + url.QueryEscape(l.TokenRec)
		}
	}

	t.Run("Resumed", func(t *testing.T) {
		var added int64
		seen := harvest("verb=ListRecords&metadataPrefix=oai_dc", func(page int, l oaiList) {
			if page != 0 {
				return
			}
			// One record already sent and one still to come are edited, and a
			// record is added, between the first and the second page.
			sent, _ := strconv.ParseInt(strings.TrimPrefix(l.Records[0].Header.Identifier, "oai:stacks:"), 10, 64)
			edit(sent)
			edit(int64(total))
			err := e.DB.Write(ctx, func(tx *db.Tx) (err error) {
				added, err = catalog.CreateRecord(tx, stacks.System, catalog.RecordInput{Title: "Added mid-harvest", Author: "Late"})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
		if len(seen) != total+1 {
			t.Errorf("harvested %d records, want %d and the one added", len(seen), total)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s sent %d times", id, n)
			}
		}
		if seen["oai:stacks:"+strconv.FormatInt(added, 10)] != 1 {
			t.Error("the record added between pages was not harvested")
		}
	})
	t.Run("UntilLeavesOutLater", func(t *testing.T) {
		// The first record sent and the last were edited after until (above).
		seen := harvest("verb=ListRecords&metadataPrefix=oai_dc&until="+until, nil)
		if seen["oai:stacks:"+strconv.Itoa(total)] != 0 {
			t.Errorf("a record edited after until %s was harvested", until)
		}
		if len(seen) == 0 || len(seen) >= total {
			t.Errorf("harvested %d of %d records until %s", len(seen), total, until)
		}
	})
}
