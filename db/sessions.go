package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SessionStore keeps scs sessions in a table of the library database (the staff
// site's sessions, the patrons' site's opac_sessions: two tables, so that no
// patron token is ever looked up as a staff session), so that they survive a
// restart and every process (each CGI request is one) sees the same sessions. It
// goes through the serialized writer and counts its statements like any other.
//
// It stores the SHA-256 of each token, never the token: the cookie holds the
// token and each lookup hashes it. Whoever reads the database (a backup, a copy
// left readable) finds no token that signs anyone in. A token is 32 random bytes,
// so a plain hash, without salt or stretching, is enough.
//
// The table has token_hash (primary key), data and expiry columns.
type SessionStore struct {
	DB *DB
	// Table is the table's name: a constant of the caller's, never input.
	Table string
}

// SessionTokenHash is what a sessions table keeps of a session token.
func SessionTokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// FindCtx implements scs.CtxStore. In a request (WithRequestVersions) it reads
// the cache versions the request will need (requestCaches) in the same
// statement as the session.
func (s *SessionStore) FindCtx(ctx context.Context, token string) (b []byte, found bool, err error) {
	if wantsRequestVersions(ctx) {
		return s.findWithVersions(ctx, token)
	}
	err = s.DB.ReadOne(ctx, func(tx *Tx) error {
		err := tx.QueryRow(`SELECT data FROM `+s.Table+` WHERE token_hash = ? AND expiry > ?`,
			SessionTokenHash(token), FormatTime(time.Now())).Scan(&b)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	return b, found, err
}

// sessionVersionsSQL + table + sessionVersionsOn selects a session (if any:
// the left join gives one row either way) with the versions of requestCaches,
// in one statement. The names are constants of this package, never input.
const sessionVersionsOn = ` s ON s.token_hash = ? AND s.expiry > ?`

var sessionVersionsSQL = func() string {
	var b strings.Builder
	b.WriteString(`SELECT s.data, s.token_hash IS NOT NULL`)
	for _, name := range requestCaches {
		fmt.Fprintf(&b, `, coalesce((SELECT version FROM cache_versions WHERE name = '%s'), 0)`, name)
	}
	b.WriteString(` FROM (SELECT 1 AS one) AS one LEFT JOIN `)
	return b.String()
}()

func (s *SessionStore) findWithVersions(ctx context.Context, token string) (b []byte, found bool, err error) {
	versions := make([]int64, len(requestCaches))
	dest := []any{&b, &found}
	for i := range versions {
		dest = append(dest, &versions[i])
	}
	err = s.DB.ReadOne(ctx, func(tx *Tx) error {
		return tx.QueryRow(sessionVersionsSQL+s.Table+sessionVersionsOn, SessionTokenHash(token), FormatTime(time.Now())).Scan(dest...)
	})
	if err != nil {
		return nil, false, err
	}
	noteRequestVersions(ctx, requestCaches[:], versions)
	if !found {
		b = nil
	}
	return b, found, nil
}

// CommitCtx implements scs.CtxStore.
func (s *SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	return s.DB.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(`INSERT INTO `+s.Table+` (token_hash, data, expiry) VALUES (?, ?, ?)
			ON CONFLICT (token_hash) DO UPDATE SET data = excluded.data, expiry = excluded.expiry`,
			SessionTokenHash(token), b, FormatTime(expiry))
		return err
	})
}

// DeleteCtx implements scs.CtxStore.
func (s *SessionStore) DeleteCtx(ctx context.Context, token string) error {
	return s.DB.Write(ctx, func(tx *Tx) error {
		_, err := tx.Exec(`DELETE FROM `+s.Table+` WHERE token_hash = ?`, SessionTokenHash(token))
		return err
	})
}

// Find implements scs.Store.
func (s *SessionStore) Find(token string) ([]byte, bool, error) {
	return s.FindCtx(context.Background(), token)
}

// Commit implements scs.Store.
func (s *SessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return s.CommitCtx(context.Background(), token, b, expiry)
}

// Delete implements scs.Store.
func (s *SessionStore) Delete(token string) error {
	return s.DeleteCtx(context.Background(), token)
}

// SessionValue is an SQL expression reading the integer the scs session codec
// stores under i.<key> in a sessions row's data (JSON in a BLOB), NULL when the
// data is not JSON (on PostgreSQL: when it does not begin with "{", as IS JSON
// needs version 16 and Debian's is 15). Staff, patrons' site and privacy code
// find a user's or a patron's sessions with it.
func SessionValue(tx *Tx, key string) string {
	return Pick(tx,
		`CASE WHEN json_valid(CAST(data AS TEXT)) THEN json_extract(CAST(data AS TEXT), '$.i.`+key+`') END`,
		`CASE WHEN substr(data, 1, 1) = CAST('\x7b' AS bytea) THEN CAST(CAST(convert_from(data, 'UTF8') AS jsonb) #>> '{i,`+key+`}' AS bigint) END`)
}
