package opac

import (
	"context"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/kit"
)

// endSessionsOf deletes every session signed in as patron pid, in tx: a changed
// PIN signs the patron out everywhere else.
func endSessionsOf(tx *db.Tx, pid int64) error {
	_, err := tx.Exec(`DELETE FROM opac_sessions WHERE `+db.SessionValue(tx, sessPatronID)+` = ?`, pid)
	return err
}

// DeleteExpiredSessions removes expired patrons' sessions; the server runs it
// periodically.
func DeleteExpiredSessions(ctx context.Context, d *db.DB) (int64, error) {
	return kit.DeleteExpiredSessions(ctx, d, "opac_sessions")
}

// sessionCodec stores a session as a small JSON document (kit.SessionCodec):
// numbers and flash messages are all a patron's session holds.
type sessionCodec = kit.SessionCodec[struct{}]
