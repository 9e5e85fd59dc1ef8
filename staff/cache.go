package staff

import (
	"context"
	"sync"

	"github.com/stacks-ils/stacks/db"
)

// Cache keeps the staff accounts a server has read, for the staff site's
// every request (which account is signed in, and is it still active). It is
// valid while the accounts' version (db.CacheStaff, moved on by a trigger in
// any transaction that changes an account or a branch) stays where it was
// when they were read: a change made by another server, a CGI process or
// hand-written SQL reaches the next request everywhere. The zero value is
// ready to use.
type Cache struct {
	mu      sync.Mutex
	version int64
	users   map[int64]*User
}

// cacheMax bounds the accounts kept; past it the cache starts again.
const cacheMax = 1000

// ByID returns the account with id, as FindByID does, from memory when the
// accounts' version has not moved since it was read.
func (c *Cache) ByID(ctx context.Context, d *db.DB, id int64) (*User, error) {
	v, err := d.CacheVersion(ctx, db.CacheStaff)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if u := c.users[id]; u != nil && c.version == v {
		cp := *u
		c.mu.Unlock()
		return &cp, nil
	}
	c.mu.Unlock()
	var u *User
	err = d.ReadOne(ctx, func(tx *db.Tx) error {
		var err error
		if u, err = FindByID(tx, id); err != nil {
			return err
		}
		v, err = tx.CacheVersion(db.CacheStaff)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.version != v || len(c.users) >= cacheMax {
		c.version, c.users = v, map[int64]*User{}
	}
	cp := *u
	c.users[id] = &cp
	c.mu.Unlock()
	return u, nil
}
