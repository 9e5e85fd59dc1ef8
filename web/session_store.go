package web

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// sessionStore keeps scs sessions in the library database, so that they survive a
// restart and every process (each CGI request is one) sees the same sessions. It
// goes through db's serialized writer and counts its statements like any other.
type sessionStore struct {
	db *db.DB
}

// FindCtx implements scs.CtxStore.
func (s *sessionStore) FindCtx(ctx context.Context, token string) (b []byte, found bool, err error) {
	err = s.db.ReadOne(ctx, func(tx *db.Tx) error {
		err := tx.QueryRow(`SELECT data FROM sessions WHERE token = ? AND expiry > ?`,
			token, db.FormatTime(time.Now())).Scan(&b)
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
		_, err := tx.Exec(`INSERT INTO sessions (token, data, expiry) VALUES (?, ?, ?)
			ON CONFLICT (token) DO UPDATE SET data = excluded.data, expiry = excluded.expiry`,
			token, b, db.FormatTime(expiry))
		return err
	})
}

// DeleteCtx implements scs.CtxStore.
func (s *sessionStore) DeleteCtx(ctx context.Context, token string) error {
	return s.db.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`DELETE FROM sessions WHERE token = ?`, token)
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
