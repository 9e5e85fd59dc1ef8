package opac

import (
	"context"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/kit"
	"github.com/stacks-ils/stacks/patrons"
)

// sessions is where the site keeps its sessions, for a changed PIN to sign the
// patron out everywhere else (patrons.Service.ChangePIN).
var sessions = patrons.Sessions{Table: "opac_sessions", PatronID: sessPatronID}

// DeleteExpiredSessions removes expired patrons' sessions; the server runs it
// periodically.
func DeleteExpiredSessions(ctx context.Context, d *db.DB) (int64, error) {
	return kit.DeleteExpiredSessions(ctx, d, "opac_sessions")
}

// sessionCodec stores a session as a small JSON document (kit.SessionCodec):
// numbers and flash messages are all a patron's session holds.
type sessionCodec = kit.SessionCodec[struct{}]
