package notices

import (
	"time"

	"github.com/stacks-ils/stacks/db"
)

// SetPreviewHook makes f run as each preview starts, until the returned
// function is called.
func SetPreviewHook(f func()) (restore func()) {
	previewHook = f
	return func() { previewHook = nil }
}

// ListMessages returns the messages f selects, newest first.
func ListMessages(tx *db.Tx, f Filter) ([]Message, error) { return listMessages(tx, f) }

// SetRenderTime sets the wall-time bound of one message's render, until the
// returned function is called.
func SetRenderTime(d time.Duration) (restore func()) {
	old := renderLimits.Time
	renderLimits.Time = d
	return func() { renderLimits.Time = old }
}
