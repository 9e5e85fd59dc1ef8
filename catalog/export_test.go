package catalog

import "github.com/stacks-ils/stacks/db"

// ForgetSearches drops the matches d's searches kept (searchCache): for the
// benchmark's cold runs and the tests of the cache.
func ForgetSearches(d *db.DB) {
	d.Memo(searchCacheKey{}, func() any { return &searchCache{} }).(*searchCache).forget()
}

// DeleteUnfinishedBatch is deleteBatch, what a staging that failed calls: for
// the test that it leaves a batch committed meanwhile alone.
var DeleteUnfinishedBatch = deleteBatch
