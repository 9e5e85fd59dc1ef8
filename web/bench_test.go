package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/web"
)

// benchEnv is a server on the default demo library with a signed-in desk client and
// a supply of available book barcodes.
func benchEnv(b testing.TB, sync string) (*testEnv, *http.Client, []string) {
	b.Helper()
	d, err := db.Open(filepath.Join(b.TempDir(), "stacks.db"), db.Options{Synchronous: sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	ctx := context.Background()
	if _, err := d.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := demo.Create(ctx, d, demo.Options{}); err != nil {
		b.Fatal(err)
	}
	var barcodes []string
	err = d.Read(ctx, func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT i.barcode FROM items i JOIN item_types t ON t.id = i.item_type_id
			WHERE i.status = 'available' AND t.code = 'BOOK' AND i.home_branch_id = 1
			AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued','in_transit','waiting'))
			ORDER BY i.id LIMIT 15`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var bc string
			rows.Scan(&bc)
			barcodes = append(barcodes, bc)
		}
		return rows.Err()
	})
	if err != nil || len(barcodes) < 15 {
		b.Fatalf("barcodes: %v (%d)", err, len(barcodes))
	}
	w := web.New(web.Config{DB: d, CachePreferences: true})
	srv := httptest.NewServer(w)
	b.Cleanup(srv.Close)
	e := &testEnv{DB: d, Srv: srv, Web: w}
	c := e.client(nil)
	if r := e.loginB(b, c); r != http.StatusSeeOther {
		b.Fatalf("login: %d", r)
	}
	return e, c, barcodes
}

// loginB signs the client in as desk; the jar keeps the cookie.
func (e *testEnv) loginB(b testing.TB, c *http.Client) int {
	resp, err := c.PostForm(e.Srv.URL+"/login", url.Values{"username": {"desk"}, "password": {"desk"}})
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func postB(b *testing.B, c *http.Client, u string, form url.Values, want int, sqlTotal *int) {
	resp, err := c.PostForm(u, form)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("POST %s %v: %d, want %d", u, form, resp.StatusCode, want)
	}
	if sqlTotal != nil {
		var app, dbt float64
		var n int
		fmt.Sscanf(resp.Header.Get("Server-Timing"), `app;dur=%f, db;dur=%f, sql;desc="%d"`, &app, &dbt, &n)
		*sqlTotal += n
	}
}

// BenchmarkDeskHTTP times the desk's POSTs end to end through the handlers
// (router, session, Server-Timing, the transaction, the 303), over loopback, with
// the durable commit (FULL) and without its fsync (NORMAL). stmts/op counts every
// SQL statement of the request, the session's included.
func BenchmarkDeskHTTP(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("checkout/"+sync, func(b *testing.B) {
			e, c, barcodes := benchEnv(b, sync)
			postB(b, c, e.Srv.URL+"/checkout/patron", url.Values{"card": {"P0001"}}, http.StatusSeeOther, nil)
			stmts := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bc := barcodes[i%len(barcodes)]
				postB(b, c, e.Srv.URL+"/checkout", url.Values{"barcode": {bc}}, http.StatusSeeOther, &stmts)
				b.StopTimer()
				postB(b, c, e.Srv.URL+"/checkin", url.Values{"barcode": {bc}}, http.StatusSeeOther, nil)
				b.StartTimer()
			}
			b.ReportMetric(float64(stmts)/float64(b.N), "stmts/op")
		})
		b.Run("checkin/"+sync, func(b *testing.B) {
			e, c, barcodes := benchEnv(b, sync)
			postB(b, c, e.Srv.URL+"/checkout/patron", url.Values{"card": {"P0001"}}, http.StatusSeeOther, nil)
			stmts := 0
			// The first checkin creates the session's checkin list (a session write).
			postB(b, c, e.Srv.URL+"/checkin", url.Values{"barcode": {barcodes[0]}}, http.StatusSeeOther, nil)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bc := barcodes[i%len(barcodes)]
				b.StopTimer()
				postB(b, c, e.Srv.URL+"/checkout", url.Values{"barcode": {bc}}, http.StatusSeeOther, nil)
				b.StartTimer()
				postB(b, c, e.Srv.URL+"/checkin", url.Values{"barcode": {bc}}, http.StatusSeeOther, &stmts)
			}
			b.ReportMetric(float64(stmts)/float64(b.N), "stmts/op")
		})
	}
}
