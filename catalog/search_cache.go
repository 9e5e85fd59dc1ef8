package catalog

import (
	"sync"

	"github.com/stacks-ils/stacks/db"
)

// CacheCatalogue names the catalogue's version (migration 0022): it moves on
// with every change to the records, in the transaction that makes it.
const CacheCatalogue = "catalogue"

// searchCacheMax is how many searches' matches a process keeps a database
// (past it, it starts again): at most ListLimit ids each (80 kB), so at most
// about 10 MB.
const searchCacheMax = 128

// matches is what a search's words match that depends on the records alone, not
// on their copies: kept under the catalogue's version (searchCache), so that a
// search repeated before the next change to the records reads none of it
// again. The facets, the availability and the filters depend on the copies,
// whose status every check-out changes; they are read at every search.
type matches struct {
	// n is how many records match, up to ListLimit + 1; best the FacetDepth
	// best of the ranked core, best first.
	n    int
	best []int64

	mu sync.Mutex
	// all are every match, when n <= ListLimit and a filter's count needed
	// them (nil before).
	all []int64
	// pages are pages of the unfiltered title and year orders.
	pages map[pageKey][]int64
}

type pageKey struct {
	sort            string
	offset, perPage int
}

// The methods of matches do nothing on a nil one (a write transaction's
// search keeps nothing).

func (m *matches) page(k pageKey) ([]int64, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pages[k]
	return p, ok
}

func (m *matches) setPage(k pageKey, ids []int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pages == nil {
		m.pages = map[pageKey][]int64{}
	}
	if len(m.pages) < 64 {
		m.pages[k] = ids
	}
}

func (m *matches) allIDs() []int64 {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.all
}

func (m *matches) setAll(ids []int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.all = ids
	m.mu.Unlock()
}

// searchCache keeps a database's matches by search (the engine's match
// expression) under one catalogue version.
type searchCache struct {
	mu      sync.Mutex
	version int64
	byMatch map[string]*matches
}

type searchCacheKey struct{}

// searchCacheOf returns tx's database's cache, or nil in a write transaction
// (db.Tx.Memo).
func searchCacheOf(tx *db.Tx) *searchCache {
	c, _ := tx.Memo(searchCacheKey{}, func() any { return &searchCache{} }).(*searchCache)
	return c
}

// get returns the matches kept for match at version, if any.
func (c *searchCache) get(version int64, match string) *matches {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != version {
		return nil
	}
	return c.byMatch[match]
}

// put keeps m for match at version, read after the version in one
// transaction: a newer version forgets everything kept under older ones, and
// what an older version's reader brings is not kept.
func (c *searchCache) put(version int64, match string, m *matches) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case version < c.version:
		return
	case version > c.version || c.byMatch == nil || len(c.byMatch) >= searchCacheMax:
		c.version, c.byMatch = version, map[string]*matches{}
	}
	c.byMatch[match] = m
}
