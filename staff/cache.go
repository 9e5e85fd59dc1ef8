package staff

import (
	"context"

	"github.com/stacks-ils/stacks/db"
)

// Cache keeps the staff accounts a server has read, for the staff site's
// every request (which account is signed in, and is it still active). It is
// valid while the accounts' version (db.CacheStaff, moved on by a trigger in
// any transaction that changes an account or a branch) stays where it was
// when they were read: a change made by another server, a CGI process or
// hand-written SQL reaches the next request everywhere.
type Cache struct {
	users *db.VersionedCache[userAt, User]
}

// userAt keys the cache: an account as it works at a branch (0 for its home).
type userAt struct{ id, branchID int64 }

// cacheMax bounds the accounts kept; past it the cache starts again.
const cacheMax = 1000

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{users: db.NewVersionedCache[userAt, User](db.CacheStaff, cacheMax)}
}

// ByID returns the account with id working at the branch branchID (0 for its
// home branch), as FindAt does, from memory when the accounts' version has not
// moved since it was read (a branch renamed or deleted moves it; a new branch
// is not in the cache yet). The account returned is the caller's own copy.
func (c *Cache) ByID(ctx context.Context, d *db.DB, id, branchID int64) (*User, error) {
	u, err := c.users.Get(ctx, d, userAt{id, branchID}, func(tx *db.Tx) (User, error) {
		u, err := FindAt(tx, id, branchID)
		if err != nil {
			return User{}, err
		}
		return *u, nil
	})
	if err != nil {
		return nil, err
	}
	return &u, nil
}
