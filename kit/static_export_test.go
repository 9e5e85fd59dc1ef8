package kit

// Version is the short hash of the assets that URL appends, for the tests.
func (s *Static) Version() string { return s.version() }
