package web

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// sessionStore keeps scs sessions in the library database, so that they survive a
// restart and every process (each CGI request is one) sees the same sessions. It
// goes through db's serialized writer and counts its statements like any other.
//
// It stores the SHA-256 of each token, never the token: the cookie holds the
// token and each lookup hashes it. Whoever reads the database (a backup, a copy
// left readable) finds no token that signs anyone in. A token is 32 random bytes,
// so a plain hash, without salt or stretching, is enough.
type sessionStore struct {
	db *db.DB
}

// tokenHash is what the sessions table keeps of a session token.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// FindCtx implements scs.CtxStore.
func (s *sessionStore) FindCtx(ctx context.Context, token string) (b []byte, found bool, err error) {
	err = s.db.ReadOne(ctx, func(tx *db.Tx) error {
		err := tx.QueryRow(`SELECT data FROM sessions WHERE token_hash = ? AND expiry > ?`,
			tokenHash(token), db.FormatTime(time.Now())).Scan(&b)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	return b, found, err
}

// CommitCtx implements scs.CtxStore.
func (s *sessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	return s.db.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO sessions (token_hash, data, expiry) VALUES (?, ?, ?)
			ON CONFLICT (token_hash) DO UPDATE SET data = excluded.data, expiry = excluded.expiry`,
			tokenHash(token), b, db.FormatTime(expiry))
		return err
	})
}

// DeleteCtx implements scs.CtxStore.
func (s *sessionStore) DeleteCtx(ctx context.Context, token string) error {
	return s.db.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`DELETE FROM sessions WHERE token_hash = ?`, tokenHash(token))
		return err
	})
}

// Find implements scs.Store.
func (s *sessionStore) Find(token string) ([]byte, bool, error) {
	return s.FindCtx(context.Background(), token)
}

// Commit implements scs.Store.
func (s *sessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return s.CommitCtx(context.Background(), token, b, expiry)
}

// Delete implements scs.Store.
func (s *sessionStore) Delete(token string) error {
	return s.DeleteCtx(context.Background(), token)
}

// endSessionsOf deletes every session signed in as staff account uid, in tx: a
// changed password ends the account's sessions everywhere (the person who changed
// their own keeps theirs under a new token: see handleAccountPassword). It reads
// the user id where sessionCodec writes it; a session in the old gob encoding
// cannot be read this way, but none survived migration 0007.
func endSessionsOf(tx *db.Tx, uid int64) (int64, error) {
	res, err := tx.Exec(`DELETE FROM sessions WHERE
		CASE WHEN json_valid(CAST(data AS TEXT)) THEN json_extract(CAST(data AS TEXT), '$.i.`+sessUserID+`') END = ?`, uid)
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
