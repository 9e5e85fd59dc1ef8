package notices

// SetPreviewHook makes f run as each preview starts, until the returned
// function is called.
func SetPreviewHook(f func()) (restore func()) {
	previewHook = f
	return func() { previewHook = nil }
}
