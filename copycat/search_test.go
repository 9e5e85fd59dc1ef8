package copycat_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/copycat"
	"github.com/stacks-ils/stacks/copycat/yaztest"
	"github.com/stacks-ils/stacks/db/dbtest"
)

func TestMain(m *testing.M) {
	code := dbtest.Main(m)
	if err := yaztest.Cleanup(); err != nil {
		os.Stderr.WriteString("yaztest: " + err.Error() + "\n")
	}
	os.Exit(code)
}

func yazStart(tb testing.TB) *yaztest.Server { return yaztest.Start(tb) }

func yazTargets(t *testing.T) (sru, z copycat.Target) {
	srv := yazStart(t)
	sru = copycat.Target{Name: "yaz SRU", Kind: copycat.SRU, Address: srv.SRU(), Syntax: copycat.MARCXML,
		Enabled: true, Timeout: 20 * time.Second}
	z = copycat.Target{Name: "yaz Z39.50", Kind: copycat.Z3950, Address: srv.Z3950(), Syntax: copycat.MARC21,
		Enabled: true, Timeout: 20 * time.Second}
	return sru, z
}

func query(t *testing.T, f copycat.Field, term string) copycat.Query {
	t.Helper()
	q, err := copycat.NewQuery(f, term)
	if err != nil {
		t.Fatalf("NewQuery(%s, %q): %v", f, term, err)
	}
	return q
}

// Both protocols find yaz-ztest's sample records by ISBN, title and author, and
// read them into MARC records with their title and author.
func TestSearchYaz(t *testing.T) {
	sru, z := yazTargets(t)
	var s copycat.Searcher
	for _, q := range []copycat.Query{
		query(t, copycat.ISBN, "0-201-89683-4"),
		query(t, copycat.Title, "how to program"),
		query(t, copycat.Author, "collins"),
	} {
		for _, target := range []copycat.Target{sru, z} {
			t.Run(target.Name+"/"+string(q.Field), func(t *testing.T) {
				res := s.Search(context.Background(), []copycat.Target{target}, q, 3)
				if len(res) != 1 {
					t.Fatalf("%d results for one target", len(res))
				}
				r := res[0]
				if r.Err != nil {
					t.Fatalf("search failed: %v", r.Err)
				}
				if r.Total < 1 || len(r.Records) < 1 || len(r.Records) > 3 || r.Skipped != 0 {
					t.Fatalf("total %d, %d records, %d skipped; want at least one hit, 1-3 records, none skipped", r.Total, len(r.Records), r.Skipped)
				}
				rec := r.Records[0]
				if got := rec.FieldsByTag("245"); len(got) != 1 || got[0].Sub('a') != "How to program a computer" {
					t.Errorf("245 = %+v", got)
				}
				if got := rec.FieldsByTag("100"); len(got) != 1 || got[0].Sub('a') != "Jack Collins" || got[0].Ind1 != '1' {
					t.Errorf("100 = %+v", got)
				}
				if strings.TrimSpace(rec.ControlField("001")) == "" || len(rec.Leader) != 24 {
					t.Errorf("leader %q, 001 %q", rec.Leader, rec.ControlField("001"))
				}
			})
		}
	}
}

// The two protocols give the same record for the same search.
func TestSearchYazProtocolsAgree(t *testing.T) {
	sru, z := yazTargets(t)
	var s copycat.Searcher
	res := s.Search(context.Background(), []copycat.Target{sru, z}, query(t, copycat.Title, "computer"), 1)
	for _, r := range res {
		if r.Err != nil || len(r.Records) != 1 {
			t.Fatalf("%s: %d records, err %v", r.Target.Name, len(r.Records), r.Err)
		}
	}
	a, b := res[0].Records[0], res[1].Records[0]
	if len(a.Fields) != len(b.Fields) {
		t.Fatalf("SRU record has %d fields, Z39.50 record %d", len(a.Fields), len(b.Fields))
	}
	for i := range a.Fields {
		fa, fb := a.Fields[i], b.Fields[i]
		if fa.Tag != fb.Tag || fa.Value != fb.Value || fa.Ind1 != fb.Ind1 || fa.Ind2 != fb.Ind2 || len(fa.Subfields) != len(fb.Subfields) {
			t.Errorf("field %d: SRU %+v, Z39.50 %+v", i, fa, fb)
		}
	}
}

// listener is a real TCP server on loopback that does what its handler does with
// each connection; it counts the connections it accepted.
type listener struct {
	ln       net.Listener
	mu       sync.Mutex
	accepted int
	conns    []net.Conn
}

func listen(t *testing.T, handle func(net.Conn)) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			l.accepted++
			l.conns = append(l.conns, c)
			l.mu.Unlock()
			go handle(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, c := range l.conns {
			c.Close()
		}
	})
	return l
}

func (l *listener) addr() string { return l.ln.Addr().String() }

func (l *listener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted
}

// hang reads what it is sent and never answers.
func hang(c net.Conn) { io.Copy(io.Discard, c) }

// garbage answers the first bytes it reads with bytes that are neither SRU nor
// Z39.50.
func garbage(c net.Conn) {
	buf := make([]byte, 512)
	if _, err := c.Read(buf); err != nil {
		return
	}
	c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>Welcome to our catalogue!</body></html>\r\n"))
	c.Close()
}

// A target that accepts and never answers, and one that answers garbage, are
// each reported as such for their own target, over both protocols, while
// yaz-ztest's answers arrive in full; the hanging targets do not hold the
// others back.
func TestSearchBrokenTargets(t *testing.T) {
	sru, z := yazTargets(t)
	hung := listen(t, hang)
	junk := listen(t, garbage)
	const hangTimeout = 3 * time.Second
	targets := []copycat.Target{
		{Name: "hangs (SRU)", Kind: copycat.SRU, Address: "http://" + hung.addr() + "/sru", Syntax: copycat.MARCXML, Timeout: hangTimeout},
		sru,
		{Name: "hangs (Z39.50)", Kind: copycat.Z3950, Address: hung.addr() + "/Books", Syntax: copycat.MARC21, Timeout: hangTimeout},
		z,
		{Name: "garbage (SRU)", Kind: copycat.SRU, Address: "http://" + junk.addr() + "/sru", Syntax: copycat.MARCXML, Timeout: 20 * time.Second},
		{Name: "garbage (Z39.50)", Kind: copycat.Z3950, Address: junk.addr() + "/Books", Syntax: copycat.MARC21, Timeout: 20 * time.Second},
	}
	var s copycat.Searcher
	res := s.Search(context.Background(), targets, query(t, copycat.ISBN, "9780201896831"), 5)
	if len(res) != len(targets) {
		t.Fatalf("%d results for %d targets", len(res), len(targets))
	}
	byName := map[string]copycat.Result{}
	for i, r := range res {
		if r.Target.Name != targets[i].Name {
			t.Fatalf("result %d is %q's, want %q's: results come in the targets' order", i, r.Target.Name, targets[i].Name)
		}
		byName[r.Target.Name] = r
	}
	for _, name := range []string{"yaz SRU", "yaz Z39.50"} {
		r := byName[name]
		if r.Err != nil || len(r.Records) == 0 {
			t.Errorf("%s: %d records, err %v", name, len(r.Records), r.Err)
		}
		// The bound is the behaviour: the working targets answer without
		// waiting for the hanging ones' timeout.
		if r.Elapsed >= hangTimeout {
			t.Errorf("%s took %v, as long as the hanging targets' timeout: it was held by them", name, r.Elapsed)
		}
	}
	wantErr := map[string]string{
		"hangs (SRU)":      "hangs (SRU): timed out after 3 s",
		"hangs (Z39.50)":   "hangs (Z39.50): timed out after 3 s",
		"garbage (SRU)":    "garbage (SRU): answered something that is not SRU",
		"garbage (Z39.50)": "garbage (Z39.50): answered something that is not Z39.50",
	}
	for name, want := range wantErr {
		r := byName[name]
		var te *copycat.TargetError
		if r.Err == nil || !errors.As(r.Err, &te) {
			t.Errorf("%s: err %v, want a *TargetError", name, r.Err)
			continue
		}
		if !strings.HasPrefix(r.Err.Error(), want) {
			t.Errorf("%s: err %q, want it to start %q", name, r.Err, want)
		}
		if len(r.Records) != 0 {
			t.Errorf("%s: %d records from a broken target", name, len(r.Records))
		}
	}
	if hung.count() != 2 || junk.count() != 2 {
		t.Errorf("the hanging listener accepted %d connections, the garbage one %d; want 2 each (one per protocol)", hung.count(), junk.count())
	}
}

// A target that refuses connections, and an SRU server that answers an HTTP
// error page, are reported as such.
func TestSearchRefusedAndHTTPError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	targets := []copycat.Target{
		{Name: "closed", Kind: copycat.Z3950, Address: closed + "/Books", Timeout: 10 * time.Second},
		{Name: "404", Kind: copycat.SRU, Address: notFound.URL + "/sru", Timeout: 10 * time.Second},
	}
	var s copycat.Searcher
	res := s.Search(context.Background(), targets, query(t, copycat.Title, "x"), 1)
	if e := res[0].Err; e == nil || !strings.Contains(e.Error(), "refused the connection") {
		t.Errorf("closed port: %v", e)
	}
	if e := res[1].Err; e == nil || !strings.Contains(e.Error(), "answered HTTP 404 Not Found") {
		t.Errorf("404: %v", e)
	}
}

// Cancelling the search (the cataloguer left the page) ends every target's
// exchange, hanging ones included, and says so.
func TestSearchCancelled(t *testing.T) {
	hung := listen(t, hang)
	ctx, cancel := context.WithCancel(context.Background())
	targets := []copycat.Target{
		{Name: "hangs", Kind: copycat.Z3950, Address: hung.addr() + "/Books", Timeout: time.Hour},
	}
	done := make(chan []copycat.Result)
	var s copycat.Searcher
	go func() { done <- s.Search(ctx, targets, query(t, copycat.Author, "x"), 1) }()
	for hung.count() == 0 {
		select {
		case res := <-done:
			t.Fatalf("search ended before connecting: %+v", res)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	res := <-done
	if e := res[0].Err; e == nil || !strings.Contains(e.Error(), "the search was cancelled") {
		t.Errorf("err %v", e)
	}
}

func TestNewQuery(t *testing.T) {
	for _, c := range []struct {
		field copycat.Field
		in    string
		want  string
		err   string
		note  string // what the Note says, "" for none
	}{
		{copycat.ISBN, "978-0-201-89683-1", "9780201896831", "", ""},
		{copycat.ISBN, " 0-201-89683-4 ", "0201896834", "", ""},
		{copycat.ISBN, "080442957X", "080442957X", "", ""},
		{copycat.ISBN, "080442957x", "080442957X", "", ""},
		{copycat.ISBN, "978 0 201 89683 1", "9780201896831", "", ""},
		{copycat.ISBN, "0 201 89683 4", "0201896834", "", ""},
		{copycat.ISBN, "ISBN 9780201896831", "9780201896831", "", ""},
		{copycat.ISBN, "ISBN: 0-201-89683-4", "0201896834", "", ""},
		{copycat.ISBN, "9780201896831 52499", "9780201896831", "", ""},
		{copycat.ISBN, "978-0-201-89683-1 90000", "9780201896831", "", ""},
		// Books are printed with wrong check digits: searched as printed.
		{copycat.ISBN, "9780201896832", "9780201896832", "", "check digit"},
		{copycat.ISBN, "0201896835", "0201896835", "", "check digit"},
		{copycat.ISBN, "12345", "", "10 or 13 digits", ""},
		{copycat.ISBN, "", "", "Scan or type an ISBN", ""},
		{copycat.Title, "  Dune ", "Dune", "", ""},
		{copycat.Title, "", "", "Type a title", ""},
		{copycat.Author, "a\x00b", "", "control characters", ""},
		{"subject", "x", "", "Search by ISBN, title or author", ""},
	} {
		q, err := copycat.NewQuery(c.field, c.in)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("NewQuery(%s, %q): %v", c.field, c.in, err)
		case c.err == "" && q.Term != c.want:
			t.Errorf("NewQuery(%s, %q) = %q, want %q", c.field, c.in, q.Term, c.want)
		case c.err == "" && (c.note == "") != (q.Note == ""), c.note != "" && !strings.Contains(q.Note, c.note):
			t.Errorf("NewQuery(%s, %q) note %q, want one saying %q", c.field, c.in, q.Note, c.note)
		case c.err != "" && (err == nil || !strings.Contains(stacks.ErrorMessage(err), c.err)):
			t.Errorf("NewQuery(%s, %q) error %v, want one saying %q", c.field, c.in, err, c.err)
		}
	}
}

// What an SRU target answers is read as the docs say: SRU 2.0's namespace,
// records packed as escaped strings, no more records than asked, a diagnostic
// in the target's words, an answer over 32 MB refused.
func TestSearchSRUAnswers(t *testing.T) {
	record := func(i int) string {
		return html.EscapeString(fmt.Sprintf(`<record xmlns="http://www.loc.gov/MARC21/slim"><leader>00000nam a2200000 a 4500</leader>`+
			`<datafield tag="245" ind1="0" ind2="0"><subfield code="a">Book %d</subfield></datafield></record>`, i))
	}
	var eight strings.Builder
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&eight, `<sru:record><sru:recordSchema>marcxml</sru:recordSchema><sru:recordPacking>string</sru:recordPacking>`+
			`<sru:recordData>%s</sru:recordData></sru:record>`, record(i))
	}
	answers := map[string]string{
		"/eight": `<?xml version="1.0"?><sru:searchRetrieveResponse xmlns:sru="http://docs.oasis-open.org/ns/search-ws/sruResponse">` +
			`<sru:version>2.0</sru:version><sru:numberOfRecords>8</sru:numberOfRecords><sru:records>` + eight.String() +
			`</sru:records></sru:searchRetrieveResponse>`,
		"/diagnostic": `<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><version>1.1</version><numberOfRecords>0</numberOfRecords>` +
			`<diagnostics><diagnostic xmlns="http://www.loc.gov/zing/srw/diagnostic/"><uri>info:srw/diagnostic/1/16</uri>` +
			`<message>Unsupported index</message><details>bath.isbn</details></diagnostic></diagnostics></searchRetrieveResponse>`,
	}
	asked := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/huge" {
			w.Write([]byte(`<searchRetrieveResponse><numberOfRecords>1</numberOfRecords><records><record><recordData>`))
			chunk := bytes.Repeat([]byte("x"), 1<<20)
			for i := 0; i < 33; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			return
		}
		if r.URL.Path == "/eight" {
			asked <- r.URL.Query().Get("maximumRecords")
		}
		w.Header().Set("Content-Type", "text/xml")
		w.Write([]byte(answers[r.URL.Path]))
	}))
	defer srv.Close()
	target := func(path string) copycat.Target {
		return copycat.Target{Name: path, Kind: copycat.SRU, Address: srv.URL + path, Syntax: copycat.MARCXML, Timeout: 20 * time.Second}
	}
	var s copycat.Searcher
	res := s.Search(context.Background(), []copycat.Target{target("/eight"), target("/diagnostic"), target("/huge")}, query(t, copycat.ISBN, "9780201896831"), 5)
	if max := <-asked; max != "5" {
		t.Errorf("asked for maximumRecords=%s, want 5", max)
	}
	if r := res[0]; r.Err != nil || r.Total != 8 || len(r.Records) != 5 || r.Skipped != 0 || r.Records[4].FieldsByTag("245")[0].Sub('a') != "Book 4" {
		t.Errorf("8 records packed as strings for 5 asked: total %d, %d records, %d skipped, %v", r.Total, len(r.Records), r.Skipped, r.Err)
	}
	if e := res[1].Err; e == nil || !strings.Contains(e.Error(), "reported Unsupported index (bath.isbn)") {
		t.Errorf("a diagnostic: %v, want the target's words", e)
	}
	if e := res[2].Err; e == nil || !strings.Contains(e.Error(), "answered more than 32 MB") {
		t.Errorf("a 33 MB answer: %v", e)
	}
}
