package copycat_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks/copycat"
)

// BenchmarkSearchYaz times one search by ISBN (ten records asked) against the
// yaz-ztest the tests start, per protocol: over Z39.50 a new connection, Init,
// Search and Present; over SRU one HTTP request (the connection kept alive
// between searches). The median of 20:
//
//	go test ./copycat -run '^$' -bench SearchYaz -benchtime 1x -count 20
func BenchmarkSearchYaz(b *testing.B) {
	srv := yazStart(b)
	targets := map[string]copycat.Target{
		"sru":   {Name: "yaz SRU", Kind: copycat.SRU, Address: srv.SRU(), Syntax: copycat.MARCXML, Timeout: copycat.DefaultTimeout},
		"z3950": {Name: "yaz Z39.50", Kind: copycat.Z3950, Address: srv.Z3950(), Syntax: copycat.MARC21, Timeout: copycat.DefaultTimeout},
	}
	q, err := copycat.NewQuery(copycat.ISBN, "9780201896831")
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"sru", "z3950"} {
		b.Run(name, func(b *testing.B) {
			var s copycat.Searcher
			for b.Loop() {
				res := s.Search(context.Background(), []copycat.Target{targets[name]}, q, 10)
				if res[0].Err != nil || len(res[0].Records) != 10 {
					b.Fatalf("%d records, err %v", len(res[0].Records), res[0].Err)
				}
			}
		})
	}
}
