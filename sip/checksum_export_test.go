package sip

// Checksum returns the SIP2 checksum of b as the AZ field carries it, for tests
// that write a terminal's messages by hand.
func Checksum(b []byte) string {
	return string(appendChecksum(make([]byte, 0, 4), b))
}
