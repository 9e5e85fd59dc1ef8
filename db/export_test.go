package db

// CompareVersions exposes compareVersions to the external tests.
var CompareVersions = compareVersions

// QueuedWrites is how many writes wait in d's group-commit queue, for the
// tests that queue writes in a known order.
func QueuedWrites(d *DB) int { return len(d.group.queue) }
