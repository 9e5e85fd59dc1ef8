package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/basepath"
)

// BenchmarkCheckoutPage renders the desk's checkout page with a patron's visit
// open (GET /checkout), in process, at the root and under a base path: the
// base path is a string join per URL, no SQL (stmts/op comes from
// Server-Timing) and a few small allocations at most.
func BenchmarkCheckoutPage(b *testing.B) {
	for _, base := range []string{"", "/library"} {
		b.Run("base="+base, func(b *testing.B) {
			e, c, _ := benchEnv(b, "NORMAL")
			postB(b, c, e.Srv.URL+"/checkout/patron", url.Values{"card": {"P0001"}}, http.StatusSeeOther, nil)
			u, _ := url.Parse(e.Srv.URL)
			h := basepath.Mount(base, e.Web)
			req := httptest.NewRequest(http.MethodGet, base+"/checkout", nil)
			for _, ck := range c.Jar.Cookies(u) {
				req.AddCookie(ck)
			}
			stmts := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `action="`+base+`/checkout"`) {
					b.Fatalf("GET %s/checkout: %d", base, w.Code)
				}
				var n int
				if _, after, ok := strings.Cut(w.Header().Get("Server-Timing"), `sql;desc="`); ok {
					for _, r := range after {
						if r < '0' || r > '9' {
							break
						}
						n = n*10 + int(r-'0')
					}
				}
				stmts += n
			}
			b.ReportMetric(float64(stmts)/float64(b.N), "stmts/op")
		})
	}
}
