package web

import (
	"context"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/kit"
)

// endSessionsOf deletes every session signed in as staff account uid, in tx: a
// changed password ends the account's sessions everywhere (the person who changed
// their own keeps theirs under a new token: see handleAccountPassword). It reads
// the user id where sessionCodec writes it; a session in the old gob encoding
// cannot be read this way, but none survived migration 0007.
func endSessionsOf(tx *db.Tx, uid int64) (int64, error) {
	res, err := tx.Exec(`DELETE FROM sessions WHERE `+db.SessionValue(tx, sessUserID)+` = ?`, uid)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// DeleteExpiredSessions removes expired staff sessions. The server runs it
// periodically; CGI processes never do (they live for one request).
func DeleteExpiredSessions(ctx context.Context, d *db.DB) (int64, error) {
	return kit.DeleteExpiredSessions(ctx, d, "sessions")
}
