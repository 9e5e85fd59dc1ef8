package web

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// DefaultHeavyReadTimeout is Config.HeavyReadTimeout's default: a standard
// report, a label sheet, a stocktake's results or a history takes well under a
// second on a 100,000-title library (docs/performance.md).
const DefaultHeavyReadTimeout = 20 * time.Second

// errHeavyBusy is a heavy read that found every heavy-read slot taken for
// db.Options.HeavyReadWait.
var errHeavyBusy = stacks.Errorf(stacks.ETOOMANY, "Many searches, reports and label sheets are running at once: try again in a moment.")

// readHeavy runs fn, a read whose cost staff choose by what they ask for (label
// sheets, standard reports and their CSV files, a stocktake's range, histories),
// as a catalogue search runs: in a heavy-read slot (db.ReadHeavy), so that
// however many run at once the desk, sign-in and /healthz keep a read
// connection, and within Config.HeavyReadTimeout, at which SQLite is
// interrupted (PostgreSQL's statement cancelled) and the slot given back.
//
// It returns errHeavyBusy (ETOOMANY) when every slot stayed taken, and tooLong
// (an EINVALID error saying what to narrow) when the deadline passed; fn's own
// errors come back as they are. Answer with heavyError.
func (s *Server) readHeavy(ctx context.Context, tooLong error, fn func(*db.Tx) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.HeavyReadTimeout)
	defer cancel()
	err := s.DB.ReadHeavy(ctx, fn)
	switch {
	case errors.Is(err, db.ErrBusy):
		return errHeavyBusy
	case err != nil && stacks.ErrorCode(err) == stacks.EINTERNAL && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return tooLong
	}
	return err
}

// heavyError answers a heavy read that failed: "busy" as a busy search is (503,
// Retry-After), anything else as Error does (a deadline's message is a 422).
func (s *Server) heavyError(w http.ResponseWriter, r *http.Request, err error) {
	if stacks.ErrorCode(err) != stacks.ETOOMANY {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Retry-After", "1")
	status := http.StatusServiceUnavailable
	s.render(w, r, status, ErrorPage(s.page(r, http.StatusText(status), ""), status, stacks.ErrorMessage(err)))
}
