package web

import (
	"context"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/kit"
)

// DeleteExpiredSessions removes expired staff sessions. The server runs it
// periodically; CGI processes never do (they live for one request).
func DeleteExpiredSessions(ctx context.Context, d *db.DB) (int64, error) {
	return kit.DeleteExpiredSessions(ctx, d, "sessions")
}
