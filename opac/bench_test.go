package opac_test

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/opac"
)

// benchTitles is the catalogue size of the harvest benchmark.
var benchTitles = func() int {
	if n, err := strconv.Atoi(os.Getenv("STACKS_BENCH_TITLES")); err == nil && n > 0 {
		return n
	}
	return 100000
}()

// BenchmarkOAIHarvest harvests a large demo catalogue (100,000 titles by
// default; STACKS_BENCH_TITLES changes it) over HTTP as a discovery layer does:
// ListIdentifiers, then ListRecords in oai_dc and marc21, each from the first
// page to the last through resumption tokens, with the server's default page
// size. It reports records a second, pages, the median and longest page, and the
// bytes harvested. make bench-oai runs it once (-benchtime 1x).
func BenchmarkOAIHarvest(b *testing.B) {
	d, err := db.Open(filepath.Join(b.TempDir(), "big.db"), db.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	d.Now = func() time.Time { return dbtest.Monday }
	start := time.Now()
	if _, err := demo.Create(ctx, d, demo.Options{Titles: benchTitles, Patrons: 2000}); err != nil {
		b.Fatal(err)
	}
	var records int
	if err := d.Read(ctx, func(tx *db.Tx) error { return tx.QueryRow(`SELECT count(*) FROM records`).Scan(&records) }); err != nil {
		b.Fatal(err)
	}
	b.Logf("demo catalogue of %d records created in %s", records, time.Since(start).Round(time.Second))
	srv := httptest.NewServer(opac.New(opac.Config{DB: d, Preferences: library.NewPreferenceCache(true)}))
	defer srv.Close()

	for _, kind := range []struct{ name, verb, prefix string }{
		{"ListIdentifiers", "ListIdentifiers", "oai_dc"},
		{"ListRecords-oai_dc", "ListRecords", "oai_dc"},
		{"ListRecords-marc21", "ListRecords", "marc21"},
	} {
		b.Run(kind.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				got, pages, bytes, pageTimes := harvest(b, srv.URL, kind.verb, kind.prefix)
				if got != records {
					b.Fatalf("harvested %d records, the catalogue has %d", got, records)
				}
				total := time.Duration(0)
				for _, t := range pageTimes {
					total += t
				}
				sortDurations(pageTimes)
				b.ReportMetric(float64(got)/total.Seconds(), "records/s")
				b.ReportMetric(float64(pages), "pages")
				b.ReportMetric(float64(bytes)/1e6, "MB")
				b.Logf("%s: %d records in %d pages, %.1f MB, %s (%.0f records/s); page median %s, longest %s",
					kind.name, got, pages, float64(bytes)/1e6, total.Round(time.Millisecond), float64(got)/total.Seconds(),
					pageTimes[len(pageTimes)/2].Round(time.Millisecond), pageTimes[len(pageTimes)-1].Round(time.Millisecond))
			}
		})
	}
}

// sortDurations sorts durations in place (insertion sort is enough for a few thousand).
func sortDurations(ts []time.Duration) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j] < ts[j-1]; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// harvest lists everything from the first page to the last, following the
// resumption tokens, and counts the records.
func harvest(b *testing.B, base, verb, prefix string) (records, pages int, size int64, times []time.Duration) {
	query := "verb=" + verb + "&metadataPrefix=" + prefix
	for {
		t0 := time.Now()
		resp, err := http.Get(base + "/oai?" + query)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		times = append(times, time.Since(t0))
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %v %d", query, err, resp.StatusCode)
		}
		pages++
		size += int64(len(body))
		if strings.Contains(string(body), "<error ") {
			b.Fatalf("%s: %s", query, body)
		}
		var l struct {
			Headers []struct{} `xml:"ListIdentifiers>header"`
			Records []struct{} `xml:"ListRecords>record"`
			Tok1    string     `xml:"ListIdentifiers>resumptionToken"`
			Tok2    string     `xml:"ListRecords>resumptionToken"`
		}
		if err := xml.Unmarshal(body, &l); err != nil {
			b.Fatal(err)
		}
		records += len(l.Headers) + len(l.Records)
		tok := l.Tok1 + l.Tok2
		if tok == "" {
			return records, pages, size, times
		}
		query = "verb=" + verb + "&resumptionToken=" + url.QueryEscape(tok)
	}
}
