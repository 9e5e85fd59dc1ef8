package web

import (
	"context"
	"time"

	"github.com/stacks-ils/stacks/db"
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

// DeleteExpiredSessions removes expired sessions. The server runs it periodically;
// CGI processes never do (they live for one request).
func DeleteExpiredSessions(ctx context.Context, d *db.DB) (int64, error) {
	var n int64
	err := d.Write(ctx, func(tx *db.Tx) error {
		res, err := tx.Exec(`DELETE FROM sessions WHERE expiry <= ?`, db.FormatTime(time.Now()))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
