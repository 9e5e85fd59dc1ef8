package web

import (
	"net/http"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/kit"
)

// DefaultHeavyReadTimeout is Config.HeavyReadTimeout's default: a standard
// report, a label sheet, a stocktake's results or a history takes well under a
// second on a 100,000-title library (docs/performance.md).
const DefaultHeavyReadTimeout = 20 * time.Second

// heavyError answers a heavy read (db.ReadBounded, run by the services given
// Config.HeavyReadTimeout) that failed: "busy" as a busy search is (503,
// Retry-After), anything else as Error does (a deadline's message is a 422).
func (s *Server) heavyError(w http.ResponseWriter, r *http.Request, err error) {
	if stacks.ErrorCode(err) != stacks.ETOOMANY {
		s.Error(w, r, err)
		return
	}
	status := kit.Busy(w)
	s.Render(w, r, status, ErrorPage(s.page(r, http.StatusText(status), ""), status, stacks.ErrorMessage(err)))
}
