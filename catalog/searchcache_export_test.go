package catalog

// forget drops everything kept, for ForgetSearches: only the tests and the
// benchmark's cold runs need a search to find nothing kept.
func (c *searchCache) forget() {
	c.mu.Lock()
	c.byMatch = nil
	c.mu.Unlock()
}
