package copycat

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
)

// converse runs a Z39.50 search against a server that answers with the bytes
// of answer, whatever it is sent, then hangs up.
func converse(t testing.TB, answer []byte) (Result, error) {
	client, server := net.Pipe()
	go io.Copy(io.Discard, server)
	go func() {
		server.Write(answer)
		server.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer client.Close()
	return searchZConn(ctx, client, Target{Name: "t", Syntax: MARC21}, "Books", Query{Field: Title, Term: "x"}, 5)
}

func packets(ps ...*ber.Packet) []byte {
	var b bytes.Buffer
	for _, p := range ps {
		b.Write(p.Bytes())
	}
	return b.Bytes()
}

func initOK() *ber.Packet { return ctxSeq(tagInitResponse, ctxBool(tagResult, true)) }

func searchOK(hits int) *ber.Packet {
	return ctxSeq(tagSearchResponse, ctxInt(tagResultCount, hits), ctxInt(tagRecordsReturned, 0), ctxInt(25, 1), ctxBool(tagSearchStatus, true))
}

func presentOf(records ...[]byte) *ber.Packet {
	list := ber.Encode(ber.ClassContext, ber.TypeConstructed, tagResponseRecords, nil, "")
	for _, r := range records {
		ext := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagExternal, nil, "")
		ext.AppendChild(ber.NewOID(ber.ClassUniversal, ber.TypePrimitive, ber.TagObjectIdentifier, oidUSMARC, ""))
		oa := ber.Encode(ber.ClassContext, ber.TypePrimitive, 1, nil, "")
		oa.Data.Write(r)
		ext.AppendChild(oa)
		list.AppendChild(seq(ctxSeq(1, ctxSeq(1, ext))))
	}
	return ctxSeq(tagPresentResponse, ctxInt(tagRecordsReturned, len(records)), ctxInt(25, len(records)+1), ctxInt(27, 0), list)
}

// A whole conversation as the standard has it: the MARC-8 record comes out in
// Unicode, and a record that is not MARC is counted as skipped.
func TestZ3950Conversation(t *testing.T) {
	res, err := converse(t, packets(initOK(), searchOK(2), presentOf(iso(' ', "Caf\xe2e"), []byte("not a record"))))
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 2 || len(res.Records) != 1 || res.Skipped != 1 {
		t.Fatalf("total %d, %d records, %d skipped", res.Total, len(res.Records), res.Skipped)
	}
	if got := res.Records[0].FieldsByTag("245")[0].Sub('a'); got != "Café" {
		t.Errorf("title %q", got)
	}
	// A target that presents more records than asked: the first 5 are kept.
	var eight [][]byte
	for i := 0; i < 8; i++ {
		eight = append(eight, iso(' ', fmt.Sprintf("Book %d", i)))
	}
	res, err = converse(t, packets(initOK(), searchOK(8), presentOf(eight...)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 8 || len(res.Records) != 5 || res.Records[4].FieldsByTag("245")[0].Sub('a') != "Book 4" {
		t.Errorf("8 records presented for 5 asked: total %d, %d records", res.Total, len(res.Records))
	}
}

// A target's refusals are reported in its words.
func TestZ3950Refusals(t *testing.T) {
	diag := ctxSeq(tagNonSurrogateDiagnostic,
		ber.NewOID(ber.ClassUniversal, ber.TypePrimitive, ber.TagObjectIdentifier, "1.2.840.10003.4.1", ""),
		ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, 114, ""),
		ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagVisibleString, "1003", ""),
	)
	for _, c := range []struct {
		name   string
		answer []byte
		want   string
	}{
		{"init rejected", packets(ctxSeq(tagInitResponse, ctxBool(tagResult, false))), "refused the connection (Init rejected)"},
		{"diagnostic", packets(initOK(), ctxSeq(tagSearchResponse, ctxInt(tagResultCount, 0), ctxBool(tagSearchStatus, false), diag)),
			"reported Bib-1 diagnostic 114 (unsupported use attribute): 1003"},
		{"search failed", packets(initOK(), ctxSeq(tagSearchResponse, ctxInt(tagResultCount, 0), ctxBool(tagSearchStatus, false))), "reported that the search failed"},
		{"close", packets(ctxSeq(tagClose, ctxInt(211, 2))), "closed the association (reason 2)"},
		{"negative count", packets(initOK(), searchOK(-13)), "reported -13 records found"},
		{"wrong APDU", packets(searchOK(1)), "not Z39.50 (APDU [23] where [21] was expected)"},
		{"hang-up", nil, "closed the connection without answering"},
		{"cut short", packets(initOK(), searchOK(3))[:10], "closed the connection without answering"},
	} {
		_, err := converse(t, c.answer)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// No hits: no Present.
	res, err := converse(t, packets(initOK(), searchOK(0)))
	if err != nil || res.Total != 0 || len(res.Records) != 0 {
		t.Errorf("no hits: %+v, %v", res, err)
	}
}

// Whatever a target answers, the client returns (records or an error) and
// never panics.
func FuzzZ3950Answer(f *testing.F) {
	f.Add(packets(initOK(), searchOK(2), presentOf(iso(' ', "Caf\xe2e"), []byte("x"))))
	f.Add(packets(initOK(), searchOK(1)))
	f.Add([]byte("HTTP/1.0 200 OK\r\n\r\n<html>"))
	f.Add([]byte{0xbf, 0x15, 0x84, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, answer []byte) {
		res, err := converse(t, answer)
		if err == nil && len(res.Records) > 5 {
			t.Errorf("%d records, 5 asked", len(res.Records))
		}
	})
}

// Whatever an SRU server answers, the parser returns and never panics.
func FuzzSRUAnswer(f *testing.F) {
	f.Add([]byte(`<zs:searchRetrieveResponse xmlns:zs="http://www.loc.gov/zing/srw/"><zs:numberOfRecords>1</zs:numberOfRecords><zs:records><zs:record><zs:recordPacking>xml</zs:recordPacking><zs:recordData><record xmlns="http://www.loc.gov/MARC21/slim"><leader>00000nam a2200000 a 4500</leader><datafield tag="245" ind1="0" ind2="0"><subfield code="a">T</subfield></datafield></record></zs:recordData></zs:record></zs:records></zs:searchRetrieveResponse>`))
	f.Add([]byte(`<html><body>no</body></html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		sr, err := parseSRU(body)
		if err != nil {
			return
		}
		for _, r := range sr.Records {
			sruMARC(r)
		}
	})
}
