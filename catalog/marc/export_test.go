package marc

// DecodeMARC8 converts one MARC-8 field value to UTF-8 (marc8Decoder), for the
// tests of the decoder on its own; the ISO 2709 reader decodes each field as it
// reads it.
func DecodeMARC8(b []byte) string {
	var d marc8Decoder
	return d.decode(b)
}

// String names the format, for the tests' messages.
func (f Format) String() string {
	switch f {
	case FormatISO2709:
		return "ISO 2709"
	case FormatMARCXML:
		return "MARCXML"
	}
	return "unknown"
}
