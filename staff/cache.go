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
	users *db.VersionedCache[int64, User]
}

// cacheMax bounds the accounts kept; past it the cache starts again.
const cacheMax = 1000

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{users: db.NewVersionedCache[int64, User](db.CacheStaff, cacheMax)}
}

// ByID returns the account with id, as FindByID does, from memory when the
// accounts' version has not moved since it was read. The account returned is
// the caller's own copy.
func (c *Cache) ByID(ctx context.Context, d *db.DB, id int64) (*User, error) {
	u, err := c.users.Get(ctx, d, id, func(tx *db.Tx) (User, error) {
		u, err := FindByID(tx, id)
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
