package passwords

// GateWaiting is how many attempts wait for a turn under the key called name,
// for the tests that wait until an attempt has taken its place.
func GateWaiting(g *Gate, name string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gk := g.keys[name]; gk != nil {
		return gk.waiting
	}
	return 0
}
