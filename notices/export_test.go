package notices

import "github.com/stacks-ils/stacks/db"

// SetPreviewHook makes f run as each preview starts, until the returned
// function is called.
func SetPreviewHook(f func()) (restore func()) {
	previewHook = f
	return func() { previewHook = nil }
}

// ListMessages returns the messages f selects, newest first.
func ListMessages(tx *db.Tx, f Filter) ([]Message, error) { return listMessages(tx, f) }
